#include "exec/external_pingpong.h"

#include <cstdio>

#include "exec/endpoints.h"
#include "exec/workload_results.h"

namespace qpo::exec {

ExternalPingpong::ExternalPingpong(RunState& st, const RunOptions& o, const plan::Step& step,
                                   const std::atomic<bool>* halt)
    : step_(step), run_(st.plan->workload_of(step)) {
  const auto& w = run_.spec;
  const auto* e = st.plan->external(run_.external);
  auto it = st.qps.find(w.qp.name);
  if (!e || it == st.qps.end() || !it->second.qp) {
    error = "QP '" + w.qp.name + "' was not brought up";
    return;
  }
  QpState& q = it->second;
  if (!q.slots || q.slot_count < 2) {  // the check refuses this (Q561); a guard, not a path
    error = "QP '" + w.qp.name + "' has no receive slots of its own";
    return;
  }
  q_ = &q;
  cfg_.op = dataplane::Op::Send;
  cfg_.initiator = e->qpo_initiates();
  cfg_.size = static_cast<uint32_t>(w.size);
  cfg_.iterations = w.iterations;
  cfg_.inline_size = q.spec->cap.max_inline_data;  // as the tool: inline when the message fits (what was asked)
  cfg_.local_mr = slot_mr_name(q);
  cfg_.local_offset = uint64_t{q.slot_count - 1} * q.slot_size;  // the last slot sends
  cfg_.recv_offset = 0;
  cfg_.recv_slot_size = q.slot_size;  // the layout bring-up posted into
  cfg_.recv_slots = q.slot_count - 1;
  cfg_.rx_depth = std::max(1u, bringup_outstanding(st, q));
  cfg_.timeout_ms = o.timeout_ms;
  cfg_.keep_times = cfg_.initiator;  // each round trip's time (halved, as the tool's usec/iter is not)
  cfg_.stop = halt;
  ep_ = own_endpoint(st, q, run_.external);
  // One thread sends and receives: the QP's receives come to its send-side reader for now.
  access_ = access_for(st, q, Reader::Sends);
  if (q.recv_cq) st.router.assign_receives(q.recv_cq, ep_.qp->qp_num, access_.owner);
}

void ExternalPingpong::run() {
  if (!q_) return;
  result_ = dataplane::run_pingpong({&ep_, ep_.recv_pool.get()}, cfg_, access_);
}

bool ExternalPingpong::finish(RunState& st) {
  const auto& w = run_.spec;
  if (q_ && q_->recv_cq)
    st.router.assign_receives(q_->recv_cq, ep_.qp->qp_num, access_for(st, *q_, Reader::Receives).owner);
  report::StepResult r;
  r.host = st.host;
  r.phase = "traffic";
  r.verb = "workload";
  r.object = w.qp.name;
  r.detail = w.name + ": ping-pong of IBV_WR_SEND x" + std::to_string(w.iterations) + ", " + std::to_string(w.size) +
             " B with external '" + run_.external + "'";
  r.plan_step = step_.index;
  const auto& res = result_;
  std::string why = error;
  if (why.empty() && res.iterations < w.iterations)
    why = "stopped after " + std::to_string(res.iterations) + " of " + std::to_string(w.iterations) + " messages";
  else if (!why.empty() && q_)
    why += " (after " + std::to_string(res.iterations) + " of " + std::to_string(w.iterations) + ")";
  if (!why.empty()) {
    r.status = report::StepStatus::Failed;
    r.message = why;
    // Halted without an error of its own: the run's reason is whatever halted it.
    bool halted = error.empty() && cfg_.stop && cfg_.stop->load();
    if (!halted) st.report.fail("workload '" + w.name + "': " + why);
    st.report.add(std::move(r));
    return false;
  }
  char buf[200];
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
  st.report.add(std::move(r));
  return true;
}

}  // namespace qpo::exec
