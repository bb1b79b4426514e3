-- examples/ud_incast: fan-in over UD. Every initiator (one UD QP each, all addressed to the
-- same target QP) streams sends at once; the target receives them all with one receive
-- stream that ends when every sender has signaled "sent" and the wire went quiet.
--
-- UD has no flow control: a message that finds no posted receive is dropped. The report
-- shows what arrived, what was lost, and how evenly the senders shared the receiver
-- (fairness = slowest / fastest sender rate).
local perf = require "qpo.perf"

function setup(args)
  return perf.setup(args, { size = 1024, iterations = 2000, tx_depth = 16, rx_depth = 1024, check = true,
                            seed = 3, idle = 0.3 })
end

local function senders(w)
  local n = 0
  for _, other in ipairs(w.workers) do
    if other.role == "initiator" then n = n + 1 end
  end
  return n
end

function initiator(w)
  local a = w.args
  local lay = perf.layout(w)
  lay.buf:fill(a.seed, lay.outbound, a.size)
  w:barrier("incast")
  local ok, r = pcall(w.qp.stream, w.qp, {
    op = "send", size = a.size, iterations = a.iterations, duration = a.duration, depth = a.tx_depth,
    mr = lay.mr, offset = lay.outbound, timeout = a.timeout,
  })
  w:signal("sent")  -- also on failure: the target must not wait for us
  if not ok then error(r, 0) end
  return perf.result("ud_incast", { r })
end

function target(w)
  local a = w.args
  local lay = perf.layout(w)
  local n = senders(w)
  assert(n > 0, "ud_incast: no initiator among w.workers, nobody to wait for")
  local r = w.qp:stream{
    op = "recv", size = a.size, depth = perf.rx_depth(w, lay, a.size), recv_mr = lay.mr, recv_offset = lay.inbound,
    check = a.check and a.seed or nil, stop_when = { signal = "sent", count = n }, idle = a.idle,
    ready = function() w:barrier("incast") end, timeout = a.timeout,
  }
  r.senders = n
  return r
end

function report(results)
  local sent, rates, receiver, notes = 0, {}, nil, {}
  for _, res in pairs(results) do
    if res.role == "initiator" and res.ok then
      sent = sent + res.result.iterations
      rates[#rates + 1] = res.result.msg_rate
      -- A sender whose send queue the data path restarted (qpo's send-queue nudge).
      for _, note in ipairs(res.result.notes or {}) do notes[#notes + 1] = "note: " .. note end
    elseif res.role == "target" and res.ok then
      receiver = res.result
    end
  end
  table.sort(rates)
  local got = receiver and receiver.rx_iterations or 0
  local s = {
    test = "ud_incast", senders = #rates, sent = sent, received = got, lost = sent - got,
    loss = sent > 0 and (sent - got) / sent or 0,
    rx_msg_rate = receiver and receiver.rx_msg_rate or 0, rx_bw_avg = receiver and receiver.rx_bw_avg or 0,
    fairness = #rates > 0 and rates[#rates] > 0 and rates[1] / rates[#rates] or 0,
    checked = receiver and receiver.checked or 0,
  }
  -- What arrived is the incast's goodput: thresholds (min_bw, min_msg_rate) judge these.
  s.bw_avg, s.msg_rate = s.rx_bw_avg, s.rx_msg_rate
  s.text = string.format(" senders %d  sent %d  received %d  lost %d (%.2f%%)  rx %.4f Mpps %.2f MB/sec  fairness %.2f",
    s.senders, s.sent, s.received, s.lost, 100 * s.loss, s.rx_msg_rate, s.rx_bw_avg, s.fairness)
  if #notes > 0 then s.text = s.text .. "\n" .. table.concat(notes, "\n") end
  return s
end
