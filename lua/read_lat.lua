-- read_lat: RDMA READ latency, like ib_read_lat. t = the whole read (no halving).
--   initiator   reads `size` bytes of the target's inbound half, waits, repeats
--   target      passive: provides the data (checked at the initiator when check = true)
local perf = require "qpo.perf"

function setup(args)
  return perf.setup(args, perf.LAT)
end

function initiator(w)
  local a = w.args
  local lay = perf.layout(w)
  local runs = {}
  for _, size in ipairs(perf.sizes(w, lay, 1)) do
    lay.buf:zero(lay.outbound, size)
    local r = w.qp:pingpong{
      op = "read", initiator = true, size = size, iterations = a.iterations, duration = a.duration,
      mr = lay.mr, offset = lay.outbound, remote = lay.remote, remote_offset = 0,
      check = a.check and a.seed or nil, timeout = a.timeout, times = perf.times(a), clock = a.clock,
      ready = function() w:barrier("read_lat " .. size) end,
    }
    w:barrier("read_lat done " .. size)
    runs[#runs + 1] = r
  end
  return perf.result("read_lat", runs)
end

function target(w)
  local a = w.args
  local lay = perf.layout(w)
  for _, size in ipairs(perf.sizes(w, lay, 1)) do
    lay.buf:fill(a.seed, lay.inbound, size)
    w:barrier("read_lat " .. size)
    w:barrier("read_lat done " .. size)
  end
  return perf.result("read_lat", {})
end

function report(results) return perf.report_lat("read_lat", results) end
