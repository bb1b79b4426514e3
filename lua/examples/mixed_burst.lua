-- examples/mixed_burst: a traffic pattern no fixed template expresses, through the per-WR
-- hook (one Lua call per work request; its cost is in docs/lua.md).
--
-- Bursts of `writes` RDMA WRITEs then `reads` RDMA READs on one RC QP. The writes walk the
-- target's inbound half chunk by chunk; each read fetches a chunk written earlier in the same
-- burst. The responder executes a QP's requests in order, so every read must see its write:
-- the initiator checks each chunk it read back, the target checks every chunk written.
local perf = require "qpo.perf"

function setup(args)
  args = perf.setup(args, { size = 4096, iterations = 3000, writes = 6, reads = 2, tx_depth = 32,
                            cq_mod = 4, chunks = 16, check = true, seed = 7 })
  if args.reads > args.writes then error("reads must not exceed writes (a read fetches a chunk of its burst)", 0) end
  return args
end

function initiator(w)
  local a = w.args
  local lay = perf.layout(w)
  local size, burst = a.size, a.writes + a.reads
  local chunks = math.min(a.chunks, lay.half // size)
  if chunks < a.writes then error("the MR holds fewer chunks than a burst writes", 0) end
  lay.buf:fill(a.seed, lay.outbound, chunks * size)
  lay.buf:zero(lay.inbound, chunks * size)
  local WRITE, READ = qpo.op.write, qpo.op.read
  local read_back, writes, reads = {}, 0, 0
  w:barrier("mixed_burst")
  local r = w.qp:stream{
    op = "write", size = size, iterations = a.iterations, depth = a.tx_depth, signal_every = a.cq_mod,
    mr = lay.mr, offset = lay.outbound, remote = lay.remote, remote_offset = 0,
    hook = function(i)
      local b, k = (i - 1) // burst, (i - 1) % burst
      if k < a.writes then
        local c = (b * a.writes + k) % chunks
        writes = writes + 1
        return WRITE, size, lay.outbound + c * size, c * size
      end
      local c = (b * a.writes + (k - a.writes)) % chunks
      read_back[c] = true
      reads = reads + 1
      return READ, size, lay.inbound + c * size, c * size
    end,
  }
  w:barrier("mixed_burst done")
  if a.check then
    for c in pairs(read_back) do
      local ok, at = lay.buf:check(a.seed, lay.inbound + c * size, size, c * size)
      if not ok then error(string.format("chunk %d read back differs at byte %d", c, at), 0) end
    end
  end
  r.writes, r.reads, r.chunks_read_back = writes, reads, 0
  for _ in pairs(read_back) do r.chunks_read_back = r.chunks_read_back + 1 end
  return perf.result("mixed_burst", { r })
end

function target(w)
  local a = w.args
  local lay = perf.layout(w)
  local chunks = math.min(a.chunks, lay.half // a.size)
  lay.buf:zero(lay.inbound, chunks * a.size)
  w:barrier("mixed_burst")
  w:barrier("mixed_burst done")
  local written = math.min(chunks, (a.iterations // (a.writes + a.reads)) * a.writes)
  if a.check then
    local ok, at = lay.buf:check(a.seed, lay.inbound, written * a.size)
    if not ok then error(string.format("QP '%s': written chunks differ at byte %d", w.qp.name, at), 0) end
  end
  return { chunks_checked = written }
end

function report(results)
  local s = perf.report_bw("mixed_burst", results)
  for _, res in pairs(results) do
    if res.role == "initiator" and res.result then
      s.writes, s.reads = res.result.writes, res.result.reads
      s.hook_calls = res.result.hook_calls
    end
  end
  return s
end
