#include "plan/workload_run.h"

#include "plan/plan.h"
#include "workload/spec.h"

namespace qpo::plan {

namespace {

// Whom `qp` talks to in `w`: its connect:, else an initiator connected to it.
std::string peer_in(const scenario::Scenario& s, const scenario::Workload& w, const std::string& qp) {
  const auto* q = s.qp(qp);
  if (q && q->connect) return q->connect.name;
  for (const auto& ref : w.initiators()) {
    const auto* i = s.qp(ref.name);
    if (i && i->connect.name == qp) return ref.name;
  }
  return "";
}

}  // namespace

WorkloadParams params_of(const scenario::Workload& w) {
  WorkloadParams p;
  p.name = w.name;
  p.script = w.script;
  if (w.op) p.op = *w.op;
  p.qp = w.qp.name;
  for (const auto& more : w.more_qps) p.more_qps.push_back(more.name);
  p.local_mr = w.local_mr.name;
  p.remote_mr = w.remote_mr.name;
  p.size = w.size;
  p.offset = w.offset;
  p.iterations = w.iterations;
  p.expect_status = w.expect_status.value_or("");
  p.group = w.group;
  p.workers = w.workers;
  p.pin = w.pin;
  p.mcast = w.mcast.name;
  p.invalidate = w.invalidate.name;
  p.thresholds = w.thresholds;
  return p;
}

WorkloadRun lower_workload(const scenario::Scenario& s, const Plan& p, const scenario::Workload& w,
                           const scenario::BringupReceives& receives) {
  WorkloadRun r;
  r.params = params_of(w);
  if (const auto* q = s.qp(w.qp.name)) r.reporter_host = s.host_of_qp(*q);
  if (w.op == util::Op::Recv) {  // receive-only: the QP itself counts what comes
    r.receivers.push_back(w.qp.name);
  } else if (w.mcast) {
    if (const auto* g = s.mcast_group(w.mcast.name))
      for (const auto& m : g->members) r.receivers.push_back(m.name);
  } else if (const auto* q = s.qp(w.qp.name); q && q->connect) {
    if (s.external(q->connect.name)) r.external = q->connect.name;
    else r.receivers.push_back(q->connect.name);
  }
  if (!r.external.empty()) r.external_peer = p.peer_id(r.external);
  if (auto g = w.mcast ? p.mcast_group_index.find(w.mcast.name) : p.mcast_group_index.end(); g != p.mcast_group_index.end())
    r.mcast_group = static_cast<int>(g->second);
  r.qp = qp_id_in(s, w.qp.name);
  for (const auto& name : r.receivers) r.receiver_ids.push_back(qp_id_in(s, name));
  const auto* window = w.remote_mr ? s.mw(w.remote_mr.name) : nullptr;
  r.remote_is_window = window != nullptr;
  r.remote_offset = w.offset + (window ? window->offset : 0);
  if (const auto* inv = w.invalidate ? s.mw(w.invalidate.name) : nullptr)
    r.invalidate_mw = static_cast<ObjectId>(inv - s.mws.data());
  if (!w.script.empty()) {
    r.script = workload::script_spec(s, w);
    for (const auto& worker : r.script.workers) {
      auto& qps = r.worker_qps.emplace_back();
      for (const auto& qp : worker.qps) {
        std::string peer = peer_in(s, w, qp);
        qps.push_back({qp, qp_id_in(s, qp), peer.empty() ? kNoObject : p.peer_id(peer), receives.scripts_own(qp)});
      }
    }
  }
  return r;
}

}  // namespace qpo::plan
