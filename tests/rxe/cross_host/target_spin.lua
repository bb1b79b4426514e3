-- The target spins in pure Lua after the first barrier (never calls into qpo, never asks
-- w:running()). With --local, host a waits at 'done' until --phase-timeout, then host b must
-- be interrupted where it spins, and the run must tear down and exit (tests/rxe/multihost.sh).
function initiator(w)
  w:barrier("start")
  w:barrier("done")
  return { ok = true }
end

function target(w)
  w:barrier("start")
  local n = 0
  while true do n = n + 1 end
end
