#pragma once
// The device's own account of why completions stopped. A CQ that overflows loses the
// completion that did not fit and raises IBV_EVENT_CQ_ERR (its QPs may go to the error
// state); a QP that hits a fatal error raises IBV_EVENT_QP_FATAL. Without reading the async
// events, such a run only sees "no completion". describe_async_events() is called when a wait
// gives up: it takes every event the devices have queued, without blocking, and names the
// scenario object each one concerns.
#include <infiniband/verbs.h>

#include <optional>
#include <string>

#include "exec/run_state.h"

namespace qpo::exec {

// "IBV_EVENT_SQ_DRAINED"; "IBV_EVENT_(unknown)" for a value the table lacks.
const char* event_name(int event_type);

// The next event queued on the device's async fd, acknowledged, waiting at most wait_ms
// (0: only what is already there); nullopt when none came. Puts the fd in non-blocking mode.
std::optional<ibv_async_event> take_async_event(ibv_context* ctx, int wait_ms);

// "" when no device has an event queued; else, e.g.
// "; the device raised IBV_EVENT_CQ_ERR on CQ 'scq' (a completion did not fit: it holds 1)".
std::string describe_async_events(const RunState& st);

}  // namespace qpo::exec
