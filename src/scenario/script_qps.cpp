#include "scenario/script_qps.h"

#include <algorithm>

namespace qpo::scenario {

namespace {

// The smoke exchange sends one message from each QP to its connect: peer and re-posts the
// receive it used at once (a second round, after RESET, re-posts its own). A receiver with
// several senders (a UD fan-in) needs one receive per sender: when the senders are on
// another host they send without waiting for this host to re-post.
uint32_t smoke_receives(const Scenario& s, const Qp& q) {
  uint32_t senders = 0;
  for (const auto& a : s.qps) senders += a.connect.name == q.name;
  return std::max<uint32_t>(senders, 1);
}

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
  return receives_belong_to_scripts(s, q.name) ? std::min(all, smoke_receives(s, q)) : all;
}

uint32_t bringup_srq_receives(const Scenario& s, const Srq& srq) {
  bool any = false;
  for (const auto& q : s.qps) {
    if (q.srq.name != srq.name) continue;
    if (!receives_belong_to_scripts(s, q.name)) return srq.max_wr;
    any = true;
  }
  return any ? std::min(srq.max_wr, uint32_t{1}) : srq.max_wr;
}

}  // namespace qpo::scenario
