#include "exec/external_pingpong.h"

#include <cstdio>

#include "exec/endpoints.h"
#include "exec/workload_results.h"

namespace qpo::exec {

ExternalPingpong::ExternalPingpong(RunState& st, const RunOptions& o, const plan::Step& step,
                                   const std::atomic<bool>* halt)
    : step_(step), run_(st.plan->workload_of(step)) {
  const auto& w = run_.params;
  const auto* e = st.plan->external_of(run_.external_peer);
  auto* found = st.qps.find(run_.qp);
  if (!e || !found || !found->qp) {
    error = "QP '" + w.qp + "' was not brought up";
    return;
  }
  QpState& q = *found;
  if (!q.slots || q.slot_count < 2) {  // the check refuses this (Q561); a guard, not a path
    error = "QP '" + w.qp + "' has no receive slots of its own";
    return;
  }
  q_ = &q;
  cfg_ = slot_pingpong(q, e->qpo_initiates(), static_cast<uint32_t>(w.size), w.iterations, o.timeout_ms, halt);
  cfg_.burst = e->messages_per_turn();
  if (e->imm_qpn) {  // udaddy: every SEND says the sender's QP number; the answering side learns the tool's so
    cfg_.imm = q.qp->get()->qp_num;
    cfg_.peer_qpn_from_imm = !cfg_.initiator;
  }
  if (cfg_.burst > 1) cfg_.keep_times = false;  // a turn of many messages is no latency
  cm_tool_ = e->rdma_cm() ? e->tool() : "";
  ep_ = own_endpoint(st, q, e->peer_id);
  rping_ = e->buffers;  // rping: a conversation of its own through the workload's local_mr
  // One thread sends and receives: the QP's receives come to its send-side reader for now.
  access_ = access_for(st, q, Reader::Sends);
  if (q.recv_cq) st.router.assign_receives(q.recv_cq, ep_.qp->qp_num, access_.owner);
}

void ExternalPingpong::run() {
  if (!q_) return;
  if (rping_) return run_rping();
  result_ = dataplane::run_pingpong({&ep_, ep_.recv_pool.get()}, cfg_, access_);
}

bool ExternalPingpong::finish(RunState& st, report::RunReport& log) {
  const auto& w = run_.params;
  if (q_ && q_->recv_cq)
    st.router.assign_receives(q_->recv_cq, ep_.qp->qp_num, access_for(st, *q_, Reader::Receives).owner);
  report::StepResult r;
  r.host = st.host;
  r.phase = "traffic";
  r.verb = "workload";
  r.object = w.qp;
  r.plan_step = step_.index;
  if (rping_) return finish_rping(log, std::move(r));
  bool burst = cfg_.burst > 1;
  std::string verb = cfg_.imm ? "IBV_WR_SEND_WITH_IMM" : "IBV_WR_SEND";
  r.detail = w.name + (burst ? ": " + verb + " x" + std::to_string(w.iterations) + " each way, all at once, "
                             : ": ping-pong of " + verb + " x" + std::to_string(w.iterations) + ", ") +
             std::to_string(w.size) + " B with external '" + run_.external + "'" + (cm_tool_.empty() ? "" : " (" + cm_tool_ + ")");
  const auto& res = result_;
  std::string why = error;
  if (why.empty() && res.iterations < w.iterations)
    why = "stopped after " + std::to_string(res.iterations) + " of " + std::to_string(w.iterations) + " messages";
  else if (!why.empty() && q_)
    why += " (after " + std::to_string(res.iterations) + " of " + std::to_string(w.iterations) + ")";
  // Halted without an error of its own: the run's reason is whatever halted it.
  if (!why.empty()) return report_failure(log, w.name, std::move(r), why, error.empty() && cfg_.stop && cfg_.stop->load());
  char buf[200];
  if (burst)
    std::snprintf(buf, sizeof buf, "%llu messages each way (%llu bytes) in %.3f s", static_cast<unsigned long long>(res.iterations),
                  static_cast<unsigned long long>(2 * res.iterations * w.size), res.seconds);
  else
    std::snprintf(buf, sizeof buf, "%llu round trips in %.3f s, %.2f us/iter, %.2f Mbit/s (as the tool counts: %llu bytes)",
                  static_cast<unsigned long long>(res.iterations), res.seconds, res.seconds * 1e6 / res.iterations,
                  2.0 * res.iterations * w.size * 8 / res.seconds / 1e6,
                  static_cast<unsigned long long>(2 * res.iterations * w.size));
  r.message = buf;
  r.micros = res.seconds * 1e6;
  auto result = std::make_shared<report::WorkloadResult>();
  result->name = w.name;
  auto times = res.times_us;
  result->summary = op_summary(w.size, w.iterations, res.seconds, times);
  r.workload = std::move(result);
  log.add(std::move(r));
  return true;
}

bool ExternalPingpong::report_failure(report::RunReport& log, const std::string& workload, report::StepResult line,
                                      const std::string& why, bool halted) {
  line.status = report::StepStatus::Failed;
  line.message = why;
  if (!halted) log.fail("workload '" + workload + "': " + why);
  log.add(std::move(line));
  return false;
}

dataplane::PingPongConfig slot_pingpong(QpState& q, bool initiator, uint32_t size, uint64_t iterations,
                                        int timeout_ms, const std::atomic<bool>* stop) {
  dataplane::PingPongConfig c;
  c.op = dataplane::Op::Send;
  c.initiator = initiator;
  c.size = size;
  c.iterations = iterations;
  c.inline_size = q.facts->cap.max_inline_data;  // as the tools: inline when the message fits (what was asked)
  c.local_mr = slot_mr_name(q);
  c.local_offset = uint64_t{q.slot_count - 1} * q.slot_size;  // the last slot sends
  c.recv_offset = 0;
  c.recv_slot_size = q.slot_size;  // the layout bring-up posted into
  c.recv_slots = q.slot_count - 1;
  c.rx_depth = std::max(1u, bringup_outstanding(q));
  c.timeout_ms = timeout_ms;
  c.keep_times = initiator;  // each round trip's time, halved (the tools' latency is half a round trip)
  c.stop = stop;
  return c;
}

}  // namespace qpo::exec
