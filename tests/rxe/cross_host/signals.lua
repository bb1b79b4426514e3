-- w:signal() across hosts, with no barrier between a signal and its wait: host b's target
-- waits for host a's initiator's "go", then answers with "reply" 5, which the initiator
-- waits for. Each side gives up after 10 s with an error naming what it did not see
-- (tests/rxe/multihost.sh). w.count counts both hosts' workers.
function initiator(w)
  assert(w.count == 2, "w.count is " .. w.count .. ", expected 2 (both hosts' workers)")
  qpo.sleep(0.3)
  w:signal("go")
  local t0 = qpo.now()
  while w:signals("reply") < 5 do
    if qpo.now() - t0 > 10 then error("no 'reply' from host b's target within 10 s", 0) end
    qpo.sleep(0.01)
  end
  return { reply = w:signals("reply") }
end

function target(w)
  assert(w.count == 2, "w.count is " .. w.count .. ", expected 2 (both hosts' workers)")
  local t0 = qpo.now()
  while w:signals("go") < 1 do
    if qpo.now() - t0 > 10 then error("no 'go' from host a's initiator within 10 s", 0) end
    qpo.sleep(0.01)
  end
  w:signal("reply", 5)
  return { go = w:signals("go") }
end

function report(results)
  local go, reply = results.qb.result.go, results.qa.result.reply
  return { go = go, reply = reply, text = string.format(" signals across hosts: go %d, reply %d", go, reply) }
end
