#pragma once
// The waits a scenario declares (an expected rdma_cm event's `within`, an event step's
// `within`, a pause, a script workload's `duration:`): a host inside one of them is on time,
// however long it is. The run's
// phase timeout bounds what comes beyond them (cli/cmd_run.cpp adds this to --phase-timeout).
#include <cstdint>

#include "plan/plan.h"

namespace qpo::plan {

// The run's own bounds of the waits a scenario leaves open: an expected CM event without
// `within` waits up to the phase timeout, an event step without it up to --timeout-ms.
struct WaitDefaults {
  uint64_t phase_timeout_ms = 120000;
  uint64_t event_timeout_ms = 5000;
};

// How long one step may wait by the scenario's own words; 0 for a step that declares none.
uint64_t declared_wait_ms(const Plan& p, const Step& s, const WaitDefaults& d = {});

// The longest a host spends in declared waits between two meetings: per host and stage (bring-up
// and setup, before the first stage, count as one), the sum of its steps' declared waits; the
// largest of these.
uint64_t longest_stage_wait_ms(const Plan& p, const WaitDefaults& d = {});

}  // namespace qpo::plan
