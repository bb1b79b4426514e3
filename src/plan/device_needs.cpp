#include "plan/device_needs.h"

#include <infiniband/verbs.h>

#include "plan/plan.h"
#include "scenario/capabilities.h"
#include "scenario/model.h"

namespace qpo::plan {

DeviceNeeds device_needs(const scenario::Scenario& s, const Plan& p) {
  DeviceNeeds n;
  for (const auto& need : scenario::needed_capabilities(s)) n.caps.push_back(need.cap);
  for (const auto& w : s.mws) n.mw_type2 |= w.type == 2;
  for (const auto& m : s.mrs) {
    if (!(m.access & IBV_ACCESS_ON_DEMAND)) continue;
    for (const auto& q : s.qps)
      if (q.pd.name == m.pd.name) n.odp_qp_types.insert(q.qp_type);
  }
  auto device_of = [&](const std::string& qp) -> ObjectId {
    const auto* q = s.qp(qp);
    const auto* d = q ? s.device_of_qp(*q) : nullptr;
    return d ? p.id_of(ObjectKind::Device, d->name) : kNoObject;
  };
  for (const auto& g : s.mcast_groups)
    for (const auto& m : g.members)
      if (auto d = device_of(m.name); d != kNoObject) ++n.mcast_attachments[d];
  for (const auto& w : s.workloads) {
    const auto* g = w.mcast ? s.mcast_group(w.mcast.name) : nullptr;
    if (!g || g->ipv4 || w.op == util::Op::Recv) continue;
    if (auto d = device_of(w.qp.name); d != kNoObject) n.ipv6_mcast_sends.push_back({g->name, g->gid_text, d});
  }
  return n;
}

}  // namespace qpo::plan
