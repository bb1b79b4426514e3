-- The target fails right after the first barrier: the initiator's host, waiting at the
-- next one, must fail promptly naming host b and that barrier (tests/rxe/multihost.sh).
function initiator(w)
  w:barrier("start")
  w:barrier("done")
  return { ok = true }
end

function target(w)
  w:barrier("start")
  error("target gives up after 'start'", 0)
end
