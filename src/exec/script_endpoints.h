#pragma once
// The QPs a script workload drives, handed to the data path as dataplane::Endpoints, and
// their receive queues cleared of the executor's own receives first.
#include <map>
#include <string>
#include <vector>

#include "dataplane/endpoint.h"
#include "exec/run_state.h"
#include "lua/workload.h"
#include "plan/workload_run.h"

namespace qpo::exec {

// The endpoint of every worker's QP (the workers this host runs); "" when all are here,
// else what is missing. A peer on another host is filled from the exchange (st.dir: its
// qpn, qkey, GID; its MRs' addr and rkey). A UD QP gets an address handle for its peer: its
// connect:, or for a target without one (a receiver anyone may send to) the initiator that
// names it, so that it can answer.
// `qps`: the QPs of the workers this host runs (plan::WorkloadRun::worker_qps).
std::string local_endpoints(RunState& st, const std::vector<const plan::ScriptQp*>& qps,
                            std::map<std::string, dataplane::Endpoint>& out);

// The executor keeps a receive or two posted on QPs that scripts own (for the smoke
// exchange; scenario/script_qps.h), in slots sized for the smoke, not for the script's
// messages: a script message landing in one would fail with IBV_WC_LOC_LEN_ERR, and a
// ping-pong (which receives into its own buffers) would take it for its own. So before the
// script starts, each such QP's peer sends it one empty message per leftover receive, and the
// receive completes here without being re-posted (SRQs keep theirs: a stream checks what
// lands there). Pairs on this host are cleared here; a QP whose peer is on another host is
// put in `across_hosts` (QP id -> leftover receives) for clear_receives_across_hosts once the
// hosts have compared notes. "" when done, else what went wrong.
std::string drain_bringup_receives(RunState& st, const std::vector<const plan::ScriptQp*>& qps, int timeout_ms,
                                   std::map<plan::QpId, uint32_t>* across_hosts);

// Every host's `across_hosts`, merged: this host sends the empty messages its QPs owe peers
// elsewhere, then awaits those its own QPs are owed.
std::string clear_receives_across_hosts(RunState& st, const plan::WorkloadRun& run,
                                        const std::map<plan::QpId, uint32_t>& all, int timeout_ms);

}  // namespace qpo::exec
