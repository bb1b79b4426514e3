#pragma once
// What a scenario asks of the devices, lowered: the capabilities it needs (scenario/
// capabilities.h), and the details their checks look at (type 2 windows, the QP types beside
// an ODP MR, multicast attachments per device, IPv6 groups and who sends to them). exec checks
// the opened devices against this (exec/capabilities.cpp) without reading the scenario.
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "plan/qp_id.h"
#include "spec/rules.h"

namespace qpo::scenario { struct Scenario; }

namespace qpo::plan {

struct Plan;

struct DeviceNeeds {
  std::vector<std::string> caps;            // capability names, sorted ("atomic", "mw", "odp", ...)
  bool mw_type2 = false;                    // a type 2 memory window
  std::set<spec::QpType> odp_qp_types;      // the types of the QPs that share a PD with an ODP MR
  std::map<ObjectId, uint64_t> mcast_attachments;  // multicast members per device (by id)
  struct Ipv6McastSend {
    std::string group, gid_text;            // a workload sends to an IPv6 group
    ObjectId device_id = kNoObject;         // from this device
  };
  std::vector<Ipv6McastSend> ipv6_mcast_sends;
};

// `p`: the plan being made (its object ids).
DeviceNeeds device_needs(const scenario::Scenario& s, const Plan& p);

}  // namespace qpo::plan
