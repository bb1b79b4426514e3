#pragma once
// Results read back (qpo report, the controller) list the workloads' results apart from the
// steps (report/run_report.h render_json); this gives each one back to the step that reported it.
#include <cstddef>
#include <memory>
#include <vector>

#include "report/run_report.h"

namespace qpo::report {

// Gives each workload, in order, to the first step without one that reported it: a script step
// named after it, an op workload's step whose detail starts with "NAME:", or (an aggregate) the
// "workload group" step named after its group. Returns how many times a step was looked at, so
// a test can check the work stays linear in steps + workloads (60,000 of each took 20 s when
// every workload searched the steps from the start).
size_t attach_workloads(std::vector<StepResult>& steps, const std::vector<std::shared_ptr<const WorkloadResult>>& workloads);

}  // namespace qpo::report
