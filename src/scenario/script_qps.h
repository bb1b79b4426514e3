#pragma once
// Which QPs script workloads drive, and what that means for the receives posted at bring-up.
// The executor fills every RQ (and SRQ) for the smoke exchange and the op workloads; a
// script's data path keeps its own receives posted (into the script's MRs, so it can check
// what arrives) and needs the room. So a QP whose receives only scripts use gets just what
// the smoke exchange needs. The planner shows that count and the executor posts it.
#include <cstdint>
#include <string>

#include "scenario/model.h"

namespace qpo::scenario {

// True when script workloads use this QP (as an initiator or a target) and no op workload
// uses it or its peer: then the data path owns its receive queue.
bool receives_belong_to_scripts(const Scenario& s, const std::string& qp);

// How many receives bring-up posts on QP `q`: max_recv_wr, or the smoke exchange's share
// when scripts own its receives.
uint32_t bringup_receives(const Scenario& s, const Qp& q);
// The same for an SRQ: its max_wr, reduced when scripts own every QP on it.
uint32_t bringup_srq_receives(const Scenario& s, const Srq& srq);

}  // namespace qpo::scenario
