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
bool run_cm_step(RunState& st, report::RunReport& log, const plan::Plan& plan, const RunOptions& o, const plan::Step& step);
// Before the agents' exchange: this host's exchange_only QPs (cm/exchange_data.h), their slot
// buffers and the MRs they carry (plan/cm_end.h) move from `mine` into the host's rdma_cm state; their
// connection's private data carries them instead (an MR another QP's workload also aims at
// stays in `mine` as well).
void hold_cm_exchange(RunState& st, const plan::Plan& plan, Directory& mine);

}  // namespace qpo::exec
