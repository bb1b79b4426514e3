#pragma once
// A workload whose QP talks to an external peer (plan/external_peer.h): the tool's own
// conversation, run on the QP alone. For ibv_pingpong it is ibv_rc_pingpong's ping-pong of
// SENDs: the client sends, the server answers each message with one of the same size, until
// each side sent and received `iterations`. qpo's receives are the slots bring-up posted
// before the exchange (as the tool posts its rx_depth receives before its own).
#include "exec/executor.h"
#include "exec/run_state.h"
#include "plan/plan.h"

namespace qpo::exec {

// Runs the Workload step and adds its line; false (the run failed) when the conversation broke.
bool run_external_pingpong(RunState& st, const RunOptions& o, const plan::Step& step);

}  // namespace qpo::exec
