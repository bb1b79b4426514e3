-- write_bw: RDMA WRITE bandwidth, like ib_write_bw.
--   initiator   streams writes from its outbound half into the target's inbound half
--   target      passive (RDMA writes need no receiver); checks the data it received;
--               with bidirectional = true it streams writes back at the same time
-- Options: size | sizes ("all" or a list), iterations | duration, tx_depth, post_list,
-- cq_mod, inline, bidirectional, events, peak, check, seed, local_mr, remote_mr.
local perf = require "qpo.perf"

function setup(args)
  return perf.setup(args, perf.BW)
end

local function writer(w, lay, size)
  local a = w.args
  return w.qp:stream{
    op = "write", size = size, iterations = a.iterations, duration = a.duration,
    depth = a.tx_depth, signal_every = a.cq_mod, post_list = a.post_list, rate = perf.wr_rate(a, size), burst = a.burst, inline = perf.inline(a),
    mr = lay.mr, offset = lay.outbound, remote = lay.remote, remote_offset = 0,
    events = a.events, peak = a.peak, qps = perf.extra_qps(w), timeout = a.timeout,
  }
end

local function side(w, sends)
  local a = w.args
  local lay = perf.layout(w)
  local runs = {}
  for _, size in ipairs(perf.sizes(w, lay, 1)) do
    lay.buf:fill(a.seed, lay.outbound, size)
    lay.buf:zero(lay.inbound, size)
    w:barrier("write_bw " .. size)
    local r = sends and writer(w, lay, size) or { size = size }
    w:barrier("write_bw done " .. size)
    -- Every write completed at its sender before "done": the data is in place.
    if a.check and (w.role == "target" or a.bidirectional) then
      local ok, at = lay.buf:check(a.seed, lay.inbound, size)
      if not ok then error(string.format("QP '%s': written data differs at byte %d of %d", w.qp.name, at, size), 0) end
      r.checked = true
    end
    runs[#runs + 1] = r
  end
  return perf.result("write_bw", runs)
end

function initiator(w) return side(w, true) end
function target(w) return side(w, w.args.bidirectional) end
function report(results) return perf.report_bw("write_bw", results) end
