#include "scenario/capabilities.h"

#include <infiniband/verbs.h>

#include <algorithm>
#include <map>

#include "util/ops.h"

namespace qpo::scenario {

std::vector<CapabilityNeed> needed_capabilities(const Scenario& s) {
  std::map<std::string, CapabilityNeed> first;  // by name: sorted, the first need kept
  auto need = [&](const std::string& cap, const std::string& path, const SourceLoc& loc) {
    first.try_emplace(cap, CapabilityNeed{cap, path, loc});
  };
  for (const auto& cap : s.requires_caps) need(cap, "requires", s.requires_loc);
  for (const auto& q : s.qps) {
    std::string path = "qps." + q.name + ".type";
    if (spec::is_xrc(q.qp_type)) need("xrc", path, q.type_loc);
    if (q.qp_type == spec::QpType::RAW_PACKET) need("raw_packet", path, q.type_loc);
    if (q.qp_type == spec::QpType::UD) need("ud", path, q.type_loc);
    if (q.qp_type == spec::QpType::UC) need("uc", path, q.type_loc);
    if (q.srq) need("srq", "qps." + q.name + ".srq", q.srq.loc);
  }
  for (const auto& c : s.cqs)
    if (c.timestamps) need("cq_timestamps", "cqs." + c.name + ".timestamps", c.loc);
  for (const auto& w : s.workloads)
    if (w.op && util::op_info(*w.op).atomic) need("atomic", "workloads." + w.name + ".op", w.op_loc);
  for (const auto& w : s.mws) need("mw", "mws." + w.name, w.loc);
  for (const auto& m : s.mrs)
    if (m.access & IBV_ACCESS_ON_DEMAND) need("odp", "mrs." + m.name + ".access", m.access_loc);  // on_demand: ODP
  std::vector<CapabilityNeed> out;
  for (auto& [cap, n] : first) out.push_back(std::move(n));
  return out;
}

}  // namespace qpo::scenario
