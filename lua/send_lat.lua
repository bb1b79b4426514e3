-- send_lat: SEND/RECV ping-pong latency, like ib_send_lat. t = half the round trip.
--   initiator   sends, waits for the answer, timestamps every iteration
--   target      answers each receive with a send of the same size
-- inline = true (default) sends inline whenever the QP's max_inline_data allows, as
-- perftest does for small messages.
local perf = require "qpo.perf"

function setup(args)
  return perf.setup(args, perf.LAT)
end

local function side(w, initiator)
  local a = w.args
  local lay = perf.layout(w)
  local runs = {}
  for _, size in ipairs(perf.sizes(w, lay, 1, true)) do
    lay.buf:fill(a.seed, lay.outbound, size)
    local r = w.qp:pingpong{
      op = "send", initiator = initiator, size = size, iterations = a.iterations, duration = a.duration,
      inline = perf.inline(a), signal_every = a.cq_mod, mr = lay.mr, offset = lay.outbound,
      recv_offset = lay.inbound, rx_depth = perf.rx_depth(w, lay, size),
      check = a.check and a.seed or nil, timeout = a.timeout, times = perf.times(a), clock = a.clock,
      ready = function() w:barrier("send_lat " .. size) end,
    }
    runs[#runs + 1] = r
  end
  return perf.result("send_lat", runs)
end

function initiator(w) return side(w, true) end
function target(w) return side(w, false) end
function report(results) return perf.report_lat("send_lat", results) end
