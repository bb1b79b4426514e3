#pragma once
// Receives the executor posts at bring-up. It fills every RQ (and SRQ) for the smoke exchange
// and the op workloads, which leaves no room for a script's data path, which keeps its own
// receives posted (into the script's MRs, so it can check what arrives). A QP (or SRQ) whose
// receives only scripts use therefore gets just what the smoke exchange needs.
#include <cstdint>
#include <string>

#include "exec/run_state.h"
#include "scenario/model.h"

namespace qpo::exec {

// True when script workloads use this QP (as an initiator or a target) and no op workload
// uses it or its peer: then the data path owns its receive queue.
bool receives_belong_to_scripts(const scenario::Scenario& s, const std::string& qp);

// How many receives to post at bring-up on QP `q`: max_recv_wr, or the smoke exchange's
// share when scripts own its receives.
uint32_t bringup_receives(const scenario::Scenario& s, const scenario::Qp& q);
// The same for an SRQ of `max_wr` entries: reduced when scripts own every QP on it.
uint32_t bringup_srq_receives(const scenario::Scenario& s, const std::string& srq, uint32_t max_wr);
// Posts `count` receives from the SRQ's slots (slot 0 up).
void post_srq_receives(RunState& st, const std::string& srq, uint32_t count);

}  // namespace qpo::exec
