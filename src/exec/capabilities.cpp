// Whether the opened devices can run the scenario at all: capability bits from
// ibv_query_device, plus the per-provider deviations in schemas/providers.yaml.

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

std::string unsupported_reason(const RunState& st, const plan::DeviceNeeds& needs) {
  for (const DeviceState* device : st.devices.listed()) {
    const DeviceState& d = *device;
    const auto& attr = d.ctx().device_attr();
    std::string who = "unsupported by device (" + d.ctx().provider() + ", " + d.ctx().device_name() + "): ";
    for (const std::string& cap : needs.caps) {
      if (auto why = spec::ProviderTable::builtin().lacks(d.ctx().provider(), cap)) return who + cap + ": " + *why;
      if (cap == "xrc" && !(attr.device_cap_flags & IBV_DEVICE_XRC)) return who + "xrc: IBV_DEVICE_XRC not set";
      if (cap == "srq" && attr.max_srq == 0) return who + "srq: max_srq is 0";
      if (cap == "atomic" && attr.atomic_cap == IBV_ATOMIC_NONE) return who + "atomic: atomic_cap is IBV_ATOMIC_NONE";
      if (cap == "cq_timestamps" || cap == "odp") {
        ibv_device_attr_ex ex{};
        if (int e = verbs::query_device_ex(d.ctx().get(), ex))
          return who + cap + ": ibv_query_device_ex failed (" + verbs::errno_name(e) + ")";
        if (cap == "odp") {
          if (auto why = odp_problem(ex.odp_caps, needs.odp_qp_types); !why.empty()) return who + "odp: " + why;
          continue;
        }
        if (ex.completion_timestamp_mask == 0)
          return who + "cq_timestamps: completion_timestamp_mask is 0 (hca_core_clock " + std::to_string(ex.hca_core_clock) +
                 " kHz)";
      }
      if (cap == "mw" && (attr.max_mw == 0 || !(attr.device_cap_flags & IBV_DEVICE_MEM_WINDOW)))
        return who + "mw: no memory windows (IBV_DEVICE_MEM_WINDOW not set, max_mw " + std::to_string(attr.max_mw) + ")";
      if (cap == "mw" && needs.mw_type2 && !(attr.device_cap_flags & (IBV_DEVICE_MEM_WINDOW_TYPE_2A | IBV_DEVICE_MEM_WINDOW_TYPE_2B)))
        return who + "mw: no type 2 memory windows (IBV_DEVICE_MEM_WINDOW_TYPE_2A/2B not set)";
    }
  }
  return mcast_unsupported(st, needs);
}

}  // namespace qpo::exec
