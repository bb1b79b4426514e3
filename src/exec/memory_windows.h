#pragma once
// Memory windows at run time: ibv_alloc_mw in setup, the timeline's bind and invalidate steps
// (each waits for its work request's completion on the bind QP's send CQ), and the meeting
// after binds where every host learns each new window's addr, length and rkey (Directory::mrs
// under the window's name, so a workload's remote_mr reaches it like an MR).
#include <string>

#include "exec/executor.h"
#include "exec/run_state.h"
#include "plan/plan.h"

namespace qpo::exec {

void alloc_mw(RunState& st, const plan::Step& step);
bool bind_mw(RunState& st, report::RunReport& log, const RunOptions& o, const plan::Step& step);
bool invalidate_mw(RunState& st, report::RunReport& log, const RunOptions& o, const plan::Step& step);
// Every host, once per bind stage: sends the windows this host bound, takes everyone's.
bool publish_mws(RunState& st, report::RunReport& log, const plan::Step& step);

}  // namespace qpo::exec
