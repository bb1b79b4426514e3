#pragma once
// rdma_cm plan steps (plan/cm_planner.h) on this host: one event channel, an id per connection
// end (and a listener per passive QP), all owned by RunState::owned so teardown destroys them
// by the plan's Destroy steps (ids before the QPs, the channel after its ids), on error too.
#include "exec/run_state.h"
#include "exec/executor.h"
#include "plan/plan.h"

namespace qpo::exec {

// Cm* steps, and the receives a CM QP gets before RTR (a PostRecv inside a stage).
bool is_cm_step(const plan::Step& step);
// Runs one; false when the run must stop. Each CM event becomes the step's line, by name.
bool run_cm_step(RunState& st, const RunOptions& o, const plan::Step& step);

}  // namespace qpo::exec
