-- The target never returns after the first barrier (a script stuck in a loop): with agents
-- the controller's --phase-timeout must fail the run naming host b and the workload; with
-- --local the phase timeout must stop host b's worker in qpo.sleep (multihost.sh).
function initiator(w)
  w:barrier("start")
  w:barrier("done")
  return { ok = true }
end

function target(w)
  w:barrier("start")
  while true do qpo.sleep(0.1) end
end
