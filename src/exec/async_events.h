#pragma once
// The device's own account of why completions stopped. A CQ that overflows loses the
// completion that did not fit and raises IBV_EVENT_CQ_ERR (its QPs may go to the error
// state); a QP that hits a fatal error raises IBV_EVENT_QP_FATAL. Without reading the async
// events, such a run only sees "no completion". describe_async_events() is called when a wait
// gives up: it takes every event the devices have queued, without blocking, and names the
// scenario object each one concerns.
#include <string>

#include "exec/run_state.h"

namespace qpo::exec {

// "" when no device has an event queued; else, e.g.
// "; the device raised IBV_EVENT_CQ_ERR on CQ 'scq' (a completion did not fit: it holds 1)".
std::string describe_async_events(const RunState& st);

}  // namespace qpo::exec
