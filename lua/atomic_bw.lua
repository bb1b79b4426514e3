-- atomic_bw: atomic operation rate, like ib_atomic_bw (8 bytes each; RC only).
--   initiator   streams fetch-and-adds (op = "faa", the default) or compare-and-swaps
--               (op = "cas") on the first 8 bytes of the target's inbound half
--   target      passive; zeroes the counter before and, with check = true, verifies it after:
--               faa: the counter equals iterations x add x QPs (exact in iteration mode)
--               cas: the counter holds `swap` (the first CAS found `compare` = 0 there)
local perf = require "qpo.perf"

local DEFAULTS = qpo.defaults({ size = 8, op = "faa", add = 1, compare = 0, swap = 1 }, perf.BW)

function setup(args)
  args = perf.setup(args, DEFAULTS)
  if args.op ~= "faa" and args.op ~= "cas" then error("op is \"faa\" or \"cas\"", 0) end
  if args.size ~= 8 then error("atomics move 8 bytes (size = 8)", 0) end
  if args.sizes then error("atomic_bw has one size (8)", 0) end
  return args
end

function initiator(w)
  local a = w.args
  local lay = perf.layout(w)
  w:barrier("atomic_bw")
  local r = w.qp:stream{
    op = a.op, size = 8, add = a.add, compare = a.compare, swap = a.swap,
    iterations = a.iterations, duration = a.duration, depth = a.tx_depth, signal_every = a.cq_mod,
    post_list = a.post_list, rate = perf.wr_rate(a, 8), burst = a.burst,
    mr = lay.mr, offset = lay.outbound, remote = lay.remote, remote_offset = 0,
    events = a.events, peak = a.peak, qps = perf.extra_qps(w), timeout = a.timeout,
  }
  w:barrier("atomic_bw done")
  return perf.result("atomic_bw", { r })
end

function target(w)
  local a = w.args
  local lay = perf.layout(w)
  lay.buf:u64(lay.inbound, 0)
  w:barrier("atomic_bw")
  w:barrier("atomic_bw done")
  local r = { size = 8, counter = lay.buf:u64(lay.inbound) }
  if a.check and not a.duration then
    -- Initiators may drive several QPs each: a whole number of runs must have landed.
    if a.op == "cas" and r.counter ~= a.swap then
      error(string.format("QP '%s': counter is %d after CAS, expected %d", w.qp.name, r.counter, a.swap), 0)
    end
    if a.op == "faa" and (r.counter == 0 or r.counter % (a.iterations * a.add) ~= 0) then
      error(string.format("QP '%s': counter is %d, not a multiple of %d x %d", w.qp.name, r.counter, a.iterations, a.add), 0)
    end
    r.checked = true
  end
  return perf.result("atomic_bw", { r })
end

function report(results) return perf.report_bw("atomic_bw", results) end
