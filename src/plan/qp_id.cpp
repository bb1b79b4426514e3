#include "plan/qp_id.h"

#include "scenario/model.h"

namespace qpo::plan {

QpId qp_id_in(const scenario::Scenario& s, const std::string& name) {
  const auto* q = s.qp(name);
  return q ? static_cast<QpId>(q - s.qps.data()) : kNoQp;
}

}  // namespace qpo::plan
