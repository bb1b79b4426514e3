-- write_lat: RDMA WRITE ping-pong latency, like ib_write_lat. t = half the round trip.
-- Each side writes into the other's inbound half and spins on the last byte of its own, which
-- carries an iteration counter: arrival is seen in memory, not through a completion.
local perf = require "qpo.perf"

function setup(args)
  return perf.setup(args, perf.LAT)
end

local function side(w, initiator)
  local a = w.args
  local lay = perf.layout(w)
  local runs = {}
  for _, size in ipairs(perf.sizes(w, lay, 1)) do
    lay.buf:fill(a.seed, lay.outbound, size)
    local r = w.qp:pingpong{
      op = "write", initiator = initiator, size = size, iterations = a.iterations, duration = a.duration,
      inline = perf.inline(a), signal_every = a.cq_mod, mr = lay.mr, offset = lay.outbound,
      remote = lay.remote, remote_offset = 0, recv_offset = lay.inbound,
      check = a.check and a.seed or nil, timeout = a.timeout, times = perf.times(a), clock = a.clock,
      ready = function() w:barrier("write_lat " .. size) end,
    }
    runs[#runs + 1] = r
  end
  return perf.result("write_lat", runs)
end

function initiator(w) return side(w, true) end
function target(w) return side(w, false) end
function report(results) return perf.report_lat("write_lat", results) end
