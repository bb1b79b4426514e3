#include "exec/run_state.h"

#include <stdexcept>

#include "plan/plan.h"

namespace qpo::exec {

QpState& RunState::qp_here(plan::QpId id) {
  if (auto* q = qps.find(id)) return *q;
  const std::string& name = plan->name_of(plan::ObjectKind::Qp, id);
  throw std::out_of_range("QP '" + (name.empty() ? "#" + std::to_string(id) : name) + "' is not on host " + host);
}

}  // namespace qpo::exec
