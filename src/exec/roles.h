#pragma once
// Who does what in the traffic phases, decided from the scenario alone so every host
// session computes the same answer without talking: smoke pairs in a fixed order, and the
// final state each QP reaches if the rule tables' predictions hold.
#include <string>
#include <vector>

#include "scenario/model.h"

namespace qpo::exec {

struct SmokePair {
  std::string sender, receiver;
  bool rdma_write = false;  // receiver grants remote write: also check an RDMA WRITE
  int index = 0;            // seeds the data pattern
};

// State after the bring-up transitions (all = false) or after every transition (all = true).
spec::QpState predicted_state(const scenario::Qp& q, bool all);
bool predicted_reset(const scenario::Qp& q);  // an extra transition back to RESET

// After bring-up (after_transitions = false), or after recovery paths back to RTS.
std::vector<SmokePair> smoke_pairs(const scenario::Scenario& s, bool after_transitions);

// Workloads that share a QP (either end) cannot run at the same time: their receives would
// interleave. wave[i] for scenario.workloads[i]; waves run one after another.
std::vector<int> workload_waves(const scenario::Scenario& s);

// A deterministic seed for a workload's data pattern.
uint32_t pattern_seed(const std::string& name);

}  // namespace qpo::exec
