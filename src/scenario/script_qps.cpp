#include "scenario/script_qps.h"

#include <algorithm>

namespace qpo::scenario {

BringupReceives::BringupReceives(const Scenario& s) {
  for (const auto& q : s.qps)
    if (q.connect) ++senders_[q.connect.name];
  for (const auto& w : s.workloads) {
    // A script uses its initiators and their peers; an op workload's receiver (its qp's peer)
    // re-posts the executor's receives, so its QPs keep them all, whatever scripts do.
    auto& used = w.script.empty() ? op_used_ : scripted_;
    for (const auto& ref : w.script.empty() ? std::vector<Ref>{w.qp} : w.initiators()) {
      used.insert(ref.name);
      if (const auto* q = s.qp(ref.name); q && q->connect) used.insert(q->connect.name);
    }
  }
  for (const auto& q : s.qps) {
    if (!q.srq) continue;
    auto [it, fresh] = srq_all_scripted_.emplace(q.srq.name, true);
    it->second = it->second && scripts_own(q.name);
  }
}

// The smoke exchange sends one message from each QP to its connect: peer and re-posts the
// receive it used at once (a second round, after RESET, re-posts its own). A receiver with
// several senders (a UD fan-in) needs one receive per sender: when the senders are on
// another host they send without waiting for this host to re-post.
uint32_t BringupReceives::of_qp(const Qp& q) const {
  uint32_t all = q.cap.max_recv_wr;
  if (!scripts_own(q.name)) return all;
  auto it = senders_.find(q.name);
  uint32_t smoke = std::max<uint32_t>(it == senders_.end() ? 0 : it->second, 1);
  return std::min(all, smoke);
}

uint32_t BringupReceives::of_srq(const Srq& srq) const {
  auto it = srq_all_scripted_.find(srq.name);
  return it != srq_all_scripted_.end() && it->second ? std::min(srq.max_wr, uint32_t{1}) : srq.max_wr;
}

}  // namespace qpo::scenario
