-- read_bw: RDMA READ bandwidth, like ib_read_bw.
--   initiator   streams reads of the target's inbound half into its own inbound half
--   target      passive: fills what is read; with bidirectional = true it reads back too
-- Outstanding reads per QP are bounded by the QP's max_rd_atomic (the scenario's RTS
-- attribute): tx_depth beyond it only queues.
local perf = require "qpo.perf"

function setup(args)
  return perf.setup(args, perf.BW)
end

local function side(w, reads)
  local a = w.args
  local lay = perf.layout(w)
  local runs = {}
  for _, size in ipairs(perf.sizes(w, lay, 1)) do
    -- What the peer reads comes from our inbound half; what we read lands in our outbound half.
    lay.buf:fill(a.seed, lay.inbound, size)
    lay.buf:zero(lay.outbound, size)
    w:barrier("read_bw " .. size)
    local r = { size = size }
    if reads then
      r = w.qp:stream{
        op = "read", size = size, iterations = a.iterations, duration = a.duration,
        depth = a.tx_depth, signal_every = a.cq_mod, post_list = a.post_list, rate = perf.wr_rate(a, size), burst = a.burst,
        mr = lay.mr, offset = lay.outbound, remote = lay.remote, remote_offset = 0,
        events = a.events, peak = a.peak, qps = perf.extra_qps(w), timeout = a.timeout,
      }
      if a.check then
        local ok, at = lay.buf:check(a.seed, lay.outbound, size)
        if not ok then error(string.format("QP '%s': read data differs at byte %d of %d", w.qp.name, at, size), 0) end
        r.checked = true
      end
    end
    w:barrier("read_bw done " .. size)
    runs[#runs + 1] = r
  end
  return perf.result("read_bw", runs)
end

function initiator(w) return side(w, true) end
function target(w) return side(w, w.args.bidirectional) end
function report(results) return perf.report_bw("read_bw", results) end
