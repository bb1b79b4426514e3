#include "exec/external_pingpong.h"

#include <cstdio>

#include "dataplane/pingpong.h"
#include "exec/endpoints.h"
#include "exec/workload_results.h"
#include "util/units.h"

namespace qpo::exec {

bool run_external_pingpong(RunState& st, const RunOptions& o, const plan::Step& step) {
  const auto& run = st.plan->workload_of(step);
  const auto& w = run.spec;
  const auto* e = st.plan->external(run.external);
  report::StepResult r;
  r.host = st.host;
  r.phase = "traffic";
  r.verb = "workload";
  r.object = w.qp.name;
  r.detail = w.name + ": ping-pong of IBV_WR_SEND x" + std::to_string(w.iterations) + ", " + std::to_string(w.size) +
             " B with external '" + run.external + "'";
  r.plan_step = step.index;
  auto fail = [&](const std::string& why) {
    r.status = report::StepStatus::Failed;
    r.message = why;
    st.report.fail("workload '" + w.name + "': " + why);
    st.report.add(std::move(r));
    return false;
  };
  auto it = st.qps.find(w.qp.name);
  if (!e || it == st.qps.end() || !it->second.qp) return fail("QP '" + w.qp.name + "' was not brought up");
  QpState& q = it->second;
  if (!q.slots || q.slot_count < 2) return fail("QP '" + w.qp.name + "' has no receive slots (max_recv_wr 0?)");

  dataplane::PingPongConfig c;
  c.op = dataplane::Op::Send;
  c.initiator = e->qpo_initiates();
  c.size = static_cast<uint32_t>(w.size);
  c.iterations = w.iterations;
  c.inline_size = q.granted_cap.max_inline_data;  // as the tool: inline when the message fits
  c.local_mr = slot_mr_name(q);
  c.local_offset = uint64_t{q.slot_count - 1} * q.slot_size;  // the last slot sends
  c.recv_offset = 0;
  c.recv_slot_size = q.slot_size;  // the layout bring-up posted into
  c.recv_slots = q.slot_count - 1;
  c.rx_depth = std::max(1u, bringup_outstanding(st, q));
  c.timeout_ms = o.timeout_ms;
  c.keep_times = c.initiator;  // each round trip's time (halved, as ibv_rc_pingpong's usec/iter is not)
  // One thread sends and receives: the QP's receives come to its send-side reader for now.
  auto access = access_for(st, q, Reader::Sends);
  uint32_t qpn = q.qp->get()->qp_num;
  if (q.recv_cq) st.router.assign_receives(q.recv_cq, qpn, access.owner);
  dataplane::PingPongResult res;
  std::string error;
  try {
    auto ep = own_endpoint(st, q, run.external);
    res = dataplane::run_pingpong({&ep, ep.recv_pool.get()}, c, access);
  } catch (const std::exception& ex) {
    error = ex.what();
  }
  if (q.recv_cq) st.router.assign_receives(q.recv_cq, qpn, access_for(st, q, Reader::Receives).owner);
  if (!error.empty()) return fail(error + " (after " + std::to_string(res.iterations) + " of " + std::to_string(w.iterations) + ")");
  if (res.iterations < w.iterations)
    return fail("the tool answered " + std::to_string(res.iterations) + " of " + std::to_string(w.iterations) + " messages");
  char buf[200];
  std::snprintf(buf, sizeof buf, "%llu round trips in %.3f s, %.2f us/iter, %.2f Mbit/s (as the tool counts: %llu bytes)",
                static_cast<unsigned long long>(res.iterations), res.seconds, res.seconds * 1e6 / res.iterations,
                2.0 * res.iterations * w.size * 8 / res.seconds / 1e6,
                static_cast<unsigned long long>(2 * res.iterations * w.size));
  r.message = buf;
  r.micros = res.seconds * 1e6;
  auto result = std::make_shared<report::WorkloadResult>();
  result->name = w.name;
  result->summary = op_summary(w.size, w.iterations, res.seconds, res.times_us);
  r.workload = std::move(result);
  st.report.add(std::move(r));
  return true;
}

}  // namespace qpo::exec
