#include "exec/run_state.h"

#include <stdexcept>

#include "plan/plan.h"

namespace qpo::exec {

DeviceState* RunState::device_named(const std::string& name) {
  return devices.find(plan->id_of(plan::ObjectKind::Device, name));
}

const DeviceState* RunState::device_named(const std::string& name) const {
  return devices.find(plan->id_of(plan::ObjectKind::Device, name));
}

QpState* RunState::qp_named(const std::string& name) { return qps.find(plan->qp_id(name)); }

const QpState* RunState::qp_named(const std::string& name) const { return qps.find(plan->qp_id(name)); }

QpState& RunState::qp_here(const std::string& name) {
  if (auto* q = qp_named(name)) return *q;
  throw std::out_of_range("QP '" + name + "' is not on host " + host);
}

QpState& RunState::qp_here(plan::QpId id) {
  if (auto* q = qps.find(id)) return *q;
  const std::string& name = plan->name_of(plan::ObjectKind::Qp, id);
  throw std::out_of_range("QP '" + (name.empty() ? "#" + std::to_string(id) : name) + "' is not on host " + host);
}

}  // namespace qpo::exec
