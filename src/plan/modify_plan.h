#pragma once
// A Modify step as exec runs and judges it, lowered once per distinct transition (the members
// of a counted group share one; Plan::modifies): the ibv_qp_attr template, and what the verb's
// answer is judged against - the states, the mask, the scenario's expectation and the rule
// tables' prediction. exec never reads the scenario's transition.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "plan/attr_template.h"
#include "scenario/model.h"
#include "spec/rules.h"

namespace qpo::plan {

struct ModifyPlan {
  AttrTemplate attrs;
  spec::QpState from = spec::QpState::RESET, to = spec::QpState::INIT;
  spec::Mask mask = 0;
  bool bring_up = true;      // from `states:`; false: from `transitions:` (after traffic)
  bool predicted_ok = true;  // the rule tables' prediction
  int expect_errno = 0;      // the scenario's `expect:` errno; 0: success expected
  std::string expect_name;   // "EINVAL" (when expect_errno is not 0)
  // The top-level attributes given as plain numbers (by the file or a default), by field:
  // what a provider's recorded refusals are matched against (spec::refusals).
  std::vector<std::pair<std::string, uint64_t>> literals;

  bool expects_failure() const { return expect_errno != 0; }
  // The bring-up's common case, which may run ahead on a bring-up thread: predicted and
  // expected to succeed.
  bool quick() const { return bring_up && predicted_ok && !expects_failure(); }
  std::optional<uint64_t> literal(std::string_view field) const;
};

ModifyPlan lower_modify(const scenario::Transition& t);

}  // namespace qpo::plan
