-- send_bw: SEND/RECV bandwidth, like ib_send_bw.
--   initiator   streams sends from its outbound half
--   target      keeps rx_depth receives posted in its inbound half (or its SRQ), re-posts as
--               they complete, checks each message when check = true
--   bidirectional = true: both sides send and receive in one loop
-- Receives are posted before the barrier, so no send meets an empty receive queue at start.
-- UD works too (each receive has 40 bytes of GRH room; sizes stop at 2048).
local perf = require "qpo.perf"

function setup(args)
  return perf.setup(args, perf.BW, { imm = true })
end

local function side(w, sends, receives)
  local a = w.args
  local lay = perf.layout(w)
  local runs = {}
  for _, size in ipairs(perf.sizes(w, lay, 1, true)) do
    lay.buf:fill(a.seed, lay.outbound, size)
    local ready = function() w:barrier("send_bw " .. size) end
    local r
    if sends then
      r = w.qp:stream{
        op = a.imm and "send_imm" or "send", imm = a.imm, size = size,
        iterations = a.iterations, duration = a.duration,
        depth = a.tx_depth, signal_every = a.cq_mod, post_list = a.post_list, rate = perf.wr_rate(a, size), burst = a.burst, inline = perf.inline(a),
        mr = lay.mr, offset = lay.outbound,
        duplex = receives, rx_depth = perf.rx_depth(w, lay, size), recv_offset = lay.inbound,
        check = receives and a.check and a.seed or nil,
        events = a.events, peak = a.peak, qps = perf.extra_qps(w), ready = ready, timeout = a.timeout,
      }
    else
      r = w.qp:stream{
        op = "recv", size = size, iterations = a.iterations, duration = a.duration,
        depth = perf.rx_depth(w, lay, size), recv_mr = lay.mr, recv_offset = lay.inbound,
        check = a.check and a.seed or nil, events = a.events, qps = perf.extra_qps(w),
        ready = ready, timeout = a.timeout,
        -- The sender's pace: the gaps between its bursts are no timeout.
        rate = perf.wr_rate(a, size), burst = a.burst > 0 and a.burst or a.post_list,
      }
    end
    runs[#runs + 1] = r
  end
  return perf.result("send_bw", runs)
end

function initiator(w) return side(w, true, w.args.bidirectional) end
function target(w) return side(w, w.args.bidirectional, true) end
function report(results) return perf.report_bw("send_bw", results) end
