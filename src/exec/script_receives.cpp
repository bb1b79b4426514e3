#include "exec/script_receives.h"

#include <algorithm>

#include "exec/steps.h"

namespace qpo::exec {

namespace {

// The smoke exchange sends one message to each receiver and re-posts the receive it used at
// once (a second round, after RESET, re-posts its own).
constexpr uint32_t kSmokeReceives = 1;

bool is_script_target(const scenario::Scenario& s, const scenario::Workload& w, const std::string& qp) {
  for (const auto& ref : w.initiators()) {
    if (ref.name == qp) return true;
    const auto* q = s.qp(ref.name);
    if (q && q->connect.name == qp) return true;
  }
  return false;
}

}  // namespace

bool receives_belong_to_scripts(const scenario::Scenario& s, const std::string& qp) {
  bool scripted = false;
  for (const auto& w : s.workloads) {
    if (!w.script.empty()) {
      scripted |= is_script_target(s, w, qp);
      continue;
    }
    // An op workload's receiver re-posts the executor's receives: keep them all.
    const auto* q = s.qp(w.qp.name);
    if (w.qp.name == qp || (q && q->connect.name == qp)) return false;
  }
  return scripted;
}

uint32_t bringup_receives(const scenario::Scenario& s, const scenario::Qp& q) {
  uint32_t all = q.cap.max_recv_wr;
  return receives_belong_to_scripts(s, q.name) ? std::min(all, kSmokeReceives) : all;
}

uint32_t bringup_srq_receives(const scenario::Scenario& s, const std::string& srq, uint32_t max_wr) {
  bool any = false;
  for (const auto& q : s.qps) {
    if (q.srq.name != srq) continue;
    if (!receives_belong_to_scripts(s, q.name)) return max_wr;
    any = true;
  }
  return any ? std::min(max_wr, kSmokeReceives) : max_wr;
}

void post_srq_receives(RunState& st, const std::string& srq, uint32_t count) {
  const auto& ss = st.srqs.at(srq);
  for (uint32_t slot = 0; slot < count && slot < ss.slot_count; ++slot) post_srq_slot(st, srq, slot);
}

}  // namespace qpo::exec
