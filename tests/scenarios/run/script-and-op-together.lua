-- The script half of script-and-op-together.yaml: waits, while it runs, for the op workload
-- of its stage to write into `mt`, which the stage's prepare step zeroed. It can only see the
-- write if the op workload runs at the same time as this script, as `workloads: [a, b]` says.
function initiator(w)
  local target = w.qp:mr("mt")
  local deadline = qpo.now() + 60
  while target:u64(0) == 0 do
    if not w:running() then error("stopped before the op workload's write arrived") end
    if qpo.now() > deadline then
      error("the op workload's write did not arrive within 60 s: it did not run beside this script")
    end
    qpo.sleep(0.01)
  end
  return { seen = true }
end

function report(results)
  return { seen = results.qa.result.seen == true }
end
