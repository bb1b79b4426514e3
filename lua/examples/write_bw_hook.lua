-- examples/write_bw_hook: write_bw with every work request chosen by Lua (the per-WR hook
-- mode), walking the target's inbound half in `size` steps. bench/perftest_compare.sh runs it
-- against ib_write_bw to measure what a Lua call per WR costs (target: >= 0.90x).
local perf = require "qpo.perf"

function setup(args)
  return perf.setup(args, perf.BW)
end

function initiator(w)
  local a = w.args
  local lay = perf.layout(w)
  local size = a.size
  local slots = math.max(1, math.min(64, lay.half // size))
  lay.buf:fill(a.seed, lay.outbound, size)
  local WRITE, outbound = qpo.op.write, lay.outbound
  w:barrier("start")
  local r = w.qp:stream{
    op = "write", size = size, iterations = a.iterations, duration = a.duration,
    depth = a.tx_depth, signal_every = a.cq_mod, post_list = a.post_list, inline = perf.inline(a),
    mr = lay.mr, offset = lay.outbound, remote = lay.remote, peak = a.peak,
    hook = function(i)
      return WRITE, size, outbound, ((i - 1) % slots) * size
    end,
  }
  w:barrier("done")
  return perf.result("write_bw_hook", { r })
end

function target(w)
  local a = w.args
  local lay = perf.layout(w)
  w:barrier("start")
  w:barrier("done")
  if a.check then
    -- Every slot written holds the same source bytes.
    local slots = math.max(1, math.min(64, lay.half // a.size))
    for s = 0, math.min(slots, a.iterations) - 1 do
      local ok, at = lay.buf:check(a.seed, s * a.size, a.size)
      if not ok then error(string.format("slot %d differs at byte %d", s, at), 0) end
    end
  end
  return { checked = a.check }
end

function report(results) return perf.report_bw("write_bw_hook", results) end
