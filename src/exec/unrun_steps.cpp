#include "exec/unrun_steps.h"

#include <string>
#include <vector>

namespace qpo::exec {

namespace {

std::string batch_message(UnrunPart part, size_t n) {
  std::string more = n == 1   ? ""
                     : n == 2 ? " and 1 later one (--verbose lists it)"
                              : " and " + std::to_string(n - 1) + " later ones (--verbose lists them)";
  if (part == UnrunPart::Teardown)
    return "nothing for it to do: the run stopped before what it undoes was made" + more;
  return "the run stopped before this step" + more;
}

}  // namespace

size_t mark_unrun_steps(report::RunReport& r, const plan::HostPlan& plan, UnrunPart part, int below) {
  std::vector<char> has_line(plan.steps.size() + 1, 0);
  for (const auto& s : r.steps)
    if (s.plan_step > 0 && static_cast<size_t>(s.plan_step) < has_line.size()) has_line[static_cast<size_t>(s.plan_step)] = 1;
  size_t first = r.steps.size(), added = 0;
  for (const auto& step : plan.steps) {
    if ((step.phase == plan::Phase::Teardown) != (part == UnrunPart::Teardown)) continue;
    if (has_line[static_cast<size_t>(step.index)] || (below > 0 && step.index >= below)) continue;
    report::StepResult line;
    line.plan_step = step.index;
    line.host = plan.host;
    line.phase = plan::phase_name(step.phase);
    line.verb = step.verb.str();
    line.object = step.object;
    line.status = report::StepStatus::NotRun;
    r.add(std::move(line));
    ++added;
  }
  if (added) r.steps[first].message = batch_message(part, added);
  return added;
}

}  // namespace qpo::exec
