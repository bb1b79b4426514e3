#pragma once
// The devices' asynchronous events (ibv_get_async_event(3)): SQ drained, SRQ limit reached,
// CQ overrun, QP fatal, port up/down. Every event read goes into the run's journal
// (event_journal.h), named by the scenario object it is about, so no reader loses one another
// reader wanted. Timeline steps expect an event (`event:`, plan::StepKind::WaitEvent) or
// forbid one (`forbid:`, ForbidEvent); a wait that gives up (no completion) names the events
// that explain it (describe_async_events): a CQ that overflowed raises IBV_EVENT_CQ_ERR.
#include <infiniband/verbs.h>

#include <optional>
#include <string>

#include "exec/executor.h"
#include "exec/run_state.h"
#include "plan/plan.h"

namespace qpo::exec {

// "IBV_EVENT_SQ_DRAINED"; "IBV_EVENT_(unknown)" for a value the table lacks.
const char* event_name(int event_type);

// The next event queued on the device's async fd, acknowledged, waiting at most wait_ms
// (0: only what is already there); nullopt when none came. Puts the fd in non-blocking mode.
std::optional<ibv_async_event> take_async_event(ibv_context* ctx, int wait_ms);

// Reads every event queued on this host's devices into st.events, waiting at most wait_ms
// for the first when none is queued. Returns how many were added.
size_t collect_async_events(const RunState& st, int wait_ms);

// "" when no device raised an event a failure message has not named yet; else, e.g.
// "; the device raised IBV_EVENT_CQ_ERR on CQ 'scq' (a completion did not fit: it holds 1)".
std::string describe_async_events(const RunState& st);

// A WaitEvent step: the event on the step's object, taken from the journal if it came
// already, else waited for (step.within_ms, or o.timeout_ms when 0). Reports one line;
// false (the run failed, naming event and object) when it did not come.
bool wait_event(RunState& st, report::RunReport& log, const plan::Step& step, const RunOptions& o);
// A ForbidEvent step: fails the run when the event on the step's object came (and was not
// taken by an earlier step), or comes within step.within_ms. Reports one line.
bool forbid_event(RunState& st, report::RunReport& log, const plan::Step& step);

}  // namespace qpo::exec
