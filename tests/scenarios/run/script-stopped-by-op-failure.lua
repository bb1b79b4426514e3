-- The script half of script-stopped-by-op-failure.yaml: runs until the run stops it. The op
-- workload beside it fails, which must stop this script at once (not after 60 s) and leave
-- the op workload's error as the run's reason.
function initiator(w)
  local deadline = qpo.now() + 60
  while w:running() do
    if qpo.now() > deadline then error("still running 60 s after the op workload beside it failed") end
    qpo.sleep(0.01)
  end
  return {}
end
