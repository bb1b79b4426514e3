#pragma once
// What runs after bring-up, in order. A scenario may write it (`timeline:`); otherwise the
// loader writes the default order every scenario had before timelines existed:
//   smoke, the workloads in waves, the extra transitions in rounds (each QP's k-th
//   `transitions:` entry in round k), and smoke again when some QP went back through RESET.
#include <string>
#include <utility>
#include <vector>

#include "scenario/model.h"

namespace qpo::scenario {

// Workloads that share a QP (either end of any initiator) cannot run at the same time: their
// receives would interleave. wave[i] for s.workloads[i]; waves run one after another.
std::vector<int> workload_waves(const Scenario& s);

// Where a workload that expects a completion error leaves QPs: a completion in error moves
// its QP to ERR (IB spec 10.8.3.3; ibv_poll_cq(3)), and on RC a remote error (REM_ACCESS,
// REM_INV_REQ, REM_OP) has moved the responder's QP to ERR as well. Empty when it expects
// success.
std::vector<std::pair<std::string, spec::QpState>> states_after_expected_error(const Scenario& s, const Workload& w);

// Fills s.timeline with the default order (only when the file gave no `timeline:`).
void write_default_timeline(Scenario& s);

}  // namespace qpo::scenario
