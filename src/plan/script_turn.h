#pragma once
// When a script workload of a timeline stage runs, decided once by the planner for every
// host alike (the hosts meet in each script's rounds, so they must take the scripts in the
// same order): beside the stage's op workloads, or first, alone, before they are set up.
#include <cstdint>
#include <vector>

namespace qpo::plan {

struct Plan;

enum class ScriptTurn : uint8_t {
  Beside,          // with the op workloads; nobody else polls its CQs (a CQ router of its own)
  BesideSharedCq,  // with them, on a CQ of theirs: read through the run's router
  AloneFirst,      // it holds a QP or an SRQ of theirs (or of an earlier script beside them)
};

// `stage`: the stage's workloads (Plan::workloads indexes), in the stage's order; the turn of
// each (Beside for an op workload). Plan facts only: every worker's QP on every host, every
// op workload's QP and receivers wherever they run.
std::vector<ScriptTurn> script_turns(const Plan& plan, const std::vector<int>& stage);

// What `qpo plan` says of a turn other than Beside ("" for Beside).
const char* script_turn_text(ScriptTurn t);

}  // namespace qpo::plan
