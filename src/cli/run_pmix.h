#pragma once
// qpo run --pmix: this process is one rank of a job a cluster's launcher started (mpirun -np N,
// srun --mpi=pmix -n N), and takes one host of the scenario; the ranks meet over PMIx
// (cluster/pmix_channel.h). Rank r runs the scenario's r-th host (its hosts in file order, those
// with a device); the launcher must start one rank per host. At the end rank 0 gathers every
// rank's report and prints the merged one, the report a controller run prints; the other
// ranks exit with their own host's code.
#include <string>

#include "cli/input.h"
#include "exec/host_session.h"
#include "plan/plan.h"

namespace qpo::cli {

struct PmixRunOutput {
  std::string format = "text";  // text | json
  bool verbose = false;
  int meeting_timeout_s = 120;  // each meeting of the ranks
};

// Rank 0: the run's exit code (report::exit_code of the merged report); another rank: its
// host's. 2 when PMIx or the mapping of ranks to hosts fails.
int run_under_pmix(const LoadedScenario& l, const plan::Plan& p, exec::RunOptions ro, const PmixRunOutput& out);

}  // namespace qpo::cli
