#include "plan/declared_waits.h"

#include <algorithm>
#include <map>

namespace qpo::plan {

uint64_t declared_wait_ms(const Plan& p, const Step& s) {
  switch (s.kind) {
    case StepKind::Pause:
      return s.extra().pause_ms;
    case StepKind::WaitEvent:
    case StepKind::ForbidEvent:
      return s.extra().within_ms;
    default:
      break;
  }
  // The rdma_cm step that ends in the expected outcome waits up to its `within`.
  if (const CmEnd* end = p.cm_end_of(s); end && !s.expect.empty()) return end->within_ms;
  return 0;
}

uint64_t longest_stage_wait_ms(const Plan& p) {
  uint64_t longest = 0;
  for (const auto& h : p.hosts) {
    std::map<int, uint64_t> per_stage;
    for (const auto& s : h.steps)
      if (uint64_t ms = declared_wait_ms(p, s)) longest = std::max(longest, per_stage[s.stage] += ms);
  }
  return longest;
}

}  // namespace qpo::plan
