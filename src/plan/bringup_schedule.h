#pragma once
// A host's bring-up as the executor runs it, worked out with the plan: its QP creates in plan
// order (each with its slot buffer's step), and the bring-up steps before and after the
// exchange, each tagged with the QP it acts on. A QP's steps depend on its create and on its
// own earlier steps only, so exec may run each QP's chain on a thread of its own ahead of the
// walk in plan order (exec/bringup_runner.h); a step on no single QP (an SRQ's receives, its
// limit) waits for the walk.
#include <cstdint>
#include <vector>

namespace qpo::plan {

struct HostPlan;
struct Plan;

struct BringUpSchedule {
  static constexpr uint32_t kNone = ~0u;
  // Positions in HostPlan::steps (a step's index - 1).
  std::vector<uint32_t> creates;  // CreateQp steps, plan order: a QP's number here is its chain
  std::vector<uint32_t> slots;    // per create: its QP's RegSlots step, or kNone
  struct Half {
    std::vector<uint32_t> steps;  // Modify, PostRecv, PostSrqRecv, ModifySrq: plan order
    std::vector<uint32_t> chain;  // per entry of `steps`: its QP's number in `creates`, or kNone
    // Each QP's entries in order: entries first[q] .. first[q + 1] of `by_qp` (indexes into steps).
    std::vector<uint32_t> first, by_qp;
  };
  Half halves[2];  // before the exchange, after it
};

// Called once the host's steps and their object ids are final.
BringUpSchedule schedule_bringup(const Plan& p, const HostPlan& h);

}  // namespace qpo::plan
