#include "plan/modify_plan.h"

namespace qpo::plan {

std::optional<uint64_t> ModifyPlan::literal(std::string_view field) const {
  for (const auto& [name, value] : literals)
    if (name == field) return value;
  return std::nullopt;
}

ModifyPlan lower_modify(const scenario::Transition& t) {
  ModifyPlan m;
  m.attrs = lower_attrs(t);
  m.from = t.from;
  m.to = t.to;
  m.mask = t.mask;
  m.bring_up = t.bring_up;
  m.predicted_ok = t.predicted_ok;
  if (t.expect && t.expect->errno_value != 0) {
    m.expect_errno = t.expect->errno_value;
    m.expect_name = t.expect->errno_name;
  }
  for (const auto& a : t.attrs)
    if (a.valid && a.symbol == scenario::Symbol::None) m.literals.emplace_back(a.field, a.number);
  return m;
}

}  // namespace qpo::plan
