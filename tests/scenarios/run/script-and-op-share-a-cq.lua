-- The script half of script-and-op-share-a-cq.yaml: once the op workload of its stage has
-- written into `mt` (zeroed by the stage's prepare step), 2000 writes of its own, completing
-- on the CQ the op workload's QP completes on too.
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
  local r = w.qp:stream{ op = "write", size = 4096, iterations = 2000, remote = "mb" }
  return { writes = r.iterations }
end

function report(results)
  return { writes = results.qa.result.writes }
end
