#pragma once
// The report is the plan with outcomes: when a run stops early (a failure, an abort from
// another host, Ctrl-C, a device that cannot run it), every planned step it never reached
// still gets its line, "not run", in its place. The first line of each batch says how many
// steps the batch holds; the others show in the text log only with --verbose (the JSON report
// and the event stream list each).
#include <cstddef>

#include "plan/plan.h"
#include "report/run_report.h"

namespace qpo::exec {

enum class UnrunPart {
  BeforeTeardown,  // steps before teardown: marked once the run has stopped
  Teardown,        // teardown steps with no line after teardown ran: their object was never made
};

// Adds a not-run line for each step of `plan` in `part` that has no line in `r` yet (the
// host's own report: every line is this host's), of those numbered below `below` when it is
// not 0. Returns how many it added.
size_t mark_unrun_steps(report::RunReport& r, const plan::HostPlan& plan, UnrunPart part, int below = 0);

}  // namespace qpo::exec
