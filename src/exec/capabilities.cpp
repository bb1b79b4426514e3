// Whether the opened devices can run the scenario at all: capability bits from
// ibv_query_device, plus the per-provider deviations in schemas/providers.yaml.

#include <string_view>
#include <utility>
#include <vector>

#include "exec/multicast.h"
#include "exec/odp_caps.h"
#include "exec/steps.h"
#include "spec/providers.h"
#include "util/ops.h"
#include "verbs/qp_control.h"

namespace qpo::exec {

std::string provider_of(const RunState& st) {
  for (const DeviceState* d : st.devices.listed()) return d->ctx().provider();
  return "";
}

namespace {

// What one device lacks for a capability the plan needs ("" when it has it).
using Check = std::string (*)(const verbs::Context& d, const plan::DeviceNeeds& needs);

std::string extended_problem(const verbs::Context& d, ibv_device_attr_ex* ex) {
  if (int e = verbs::query_device_ex(d.get(), *ex)) return "ibv_query_device_ex failed (" + verbs::errno_name(e) + ")";
  return "";
}

std::string xrc_problem(const verbs::Context& d, const plan::DeviceNeeds&) {
  return d.device_attr().device_cap_flags & IBV_DEVICE_XRC ? "" : "IBV_DEVICE_XRC not set";
}

std::string srq_problem(const verbs::Context& d, const plan::DeviceNeeds&) {
  return d.device_attr().max_srq == 0 ? "max_srq is 0" : "";
}

std::string atomic_problem(const verbs::Context& d, const plan::DeviceNeeds&) {
  return d.device_attr().atomic_cap == IBV_ATOMIC_NONE ? "atomic_cap is IBV_ATOMIC_NONE" : "";
}

std::string timestamps_problem(const verbs::Context& d, const plan::DeviceNeeds&) {
  ibv_device_attr_ex ex{};
  if (auto why = extended_problem(d, &ex); !why.empty()) return why;
  if (ex.completion_timestamp_mask != 0) return "";
  return "completion_timestamp_mask is 0 (hca_core_clock " + std::to_string(ex.hca_core_clock) + " kHz)";
}

std::string odp_check(const verbs::Context& d, const plan::DeviceNeeds& needs) {
  ibv_device_attr_ex ex{};
  if (auto why = extended_problem(d, &ex); !why.empty()) return why;
  return odp_problem(ex.odp_caps, needs.odp_qp_types);
}

std::string mw_problem(const verbs::Context& d, const plan::DeviceNeeds& needs) {
  const auto& attr = d.device_attr();
  if (attr.max_mw == 0 || !(attr.device_cap_flags & IBV_DEVICE_MEM_WINDOW))
    return "no memory windows (IBV_DEVICE_MEM_WINDOW not set, max_mw " + std::to_string(attr.max_mw) + ")";
  if (needs.mw_type2 && !(attr.device_cap_flags & (IBV_DEVICE_MEM_WINDOW_TYPE_2A | IBV_DEVICE_MEM_WINDOW_TYPE_2B)))
    return "no type 2 memory windows (IBV_DEVICE_MEM_WINDOW_TYPE_2A/2B not set)";
  return "";
}

// The capabilities a device tells of itself, by the names `requires:` and providers.yaml give
// them. One not here (raw_packet, ...) is known from providers.yaml's `unsupported:` only.
struct CapabilityCheck {
  std::string_view name;
  Check problem;
};
constexpr CapabilityCheck kChecks[] = {
    {"xrc", xrc_problem},       {"srq", srq_problem}, {"atomic", atomic_problem}, {"cq_timestamps", timestamps_problem},
    {"odp", odp_check},         {"mw", mw_problem},
};

Check check_of(std::string_view capability) {
  for (const auto& c : kChecks)
    if (c.name == capability) return c.problem;
  return nullptr;
}

}  // namespace

std::string unsupported_reason(const RunState& st, const plan::DeviceNeeds& needs) {
  std::vector<std::pair<const std::string*, Check>> checks;  // each needed capability's, found once
  for (const std::string& cap : needs.caps) checks.emplace_back(&cap, check_of(cap));
  for (const DeviceState* device : st.devices.listed()) {
    const verbs::Context& d = device->ctx();
    std::string who = "unsupported by device (" + d.provider() + ", " + d.device_name() + "): ";
    for (const auto& [cap, check] : checks) {
      if (auto why = spec::ProviderTable::builtin().lacks(d.provider(), *cap)) return who + *cap + ": " + *why;
      if (!check) continue;
      if (std::string why = check(d, needs); !why.empty()) return who + *cap + ": " + why;
    }
  }
  return mcast_unsupported(st, needs);
}

}  // namespace qpo::exec
