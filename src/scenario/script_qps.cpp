#include "scenario/script_qps.h"

#include <algorithm>

namespace qpo::scenario {

namespace {

// The smoke exchange sends one message to each receiver and re-posts the receive it used at
// once (a second round, after RESET, re-posts its own).
constexpr uint32_t kSmokeReceives = 1;

bool is_script_qp(const Scenario& s, const Workload& w, const std::string& qp) {
  for (const auto& ref : w.initiators()) {
    if (ref.name == qp) return true;
    const auto* q = s.qp(ref.name);
    if (q && q->connect.name == qp) return true;
  }
  return false;
}

}  // namespace

bool receives_belong_to_scripts(const Scenario& s, const std::string& qp) {
  bool scripted = false;
  for (const auto& w : s.workloads) {
    if (!w.script.empty()) {
      scripted |= is_script_qp(s, w, qp);
      continue;
    }
    // An op workload's receiver re-posts the executor's receives: keep them all.
    const auto* q = s.qp(w.qp.name);
    if (w.qp.name == qp || (q && q->connect.name == qp)) return false;
  }
  return scripted;
}

uint32_t bringup_receives(const Scenario& s, const Qp& q) {
  uint32_t all = q.cap.max_recv_wr;
  return receives_belong_to_scripts(s, q.name) ? std::min(all, kSmokeReceives) : all;
}

uint32_t bringup_srq_receives(const Scenario& s, const Srq& srq) {
  bool any = false;
  for (const auto& q : s.qps) {
    if (q.srq.name != srq.name) continue;
    if (!receives_belong_to_scripts(s, q.name)) return srq.max_wr;
    any = true;
  }
  return any ? std::min(srq.max_wr, kSmokeReceives) : srq.max_wr;
}

}  // namespace qpo::scenario
