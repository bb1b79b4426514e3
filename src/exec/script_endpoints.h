#pragma once
// The QPs a script workload drives, handed to the data path as dataplane::Endpoints, and
// their receive queues cleared of the executor's own receives first.
#include <map>
#include <string>

#include "dataplane/endpoint.h"
#include "exec/run_state.h"
#include "lua/workload.h"
#include "scenario/model.h"

namespace qpo::exec {

// The endpoint of every worker's QP; "" when all are in this session, else what is missing.
// A UD QP gets an address handle for its peer: its connect:, or for a target without one
// (a receiver anyone may send to) the initiator that names it, so that it can answer.
std::string local_endpoints(RunState& st, const scenario::Workload& w, const lua::WorkloadSpec& spec,
                            std::map<std::string, dataplane::Endpoint>& out);

// The executor keeps a receive or two posted on QPs that scripts own (for the smoke
// exchange; script_receives.h). A message landing in one would bypass the data path: a
// ping-pong would never see it, a stream would count it unchecked. So before the script
// starts, each such QP's peer sends it one empty message per leftover receive, and the
// receive completes here without being re-posted (SRQs keep theirs: a stream counts what
// lands there). "" when done, else what went wrong.
std::string drain_bringup_receives(RunState& st, const scenario::Workload& w, const lua::WorkloadSpec& spec,
                                   int timeout_ms);

}  // namespace qpo::exec
