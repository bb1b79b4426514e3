#pragma once
// The steps after bring-up, from the scenario's timeline: which host does what in each
// stage, the smoke pairs as the QPs' states stand at that point, each workload's data
// pattern (a read of bytes an earlier workload wrote expects those bytes), the follow-ups
// each transition implies (flush, re-posted receives, SQ drained), state read-backs after
// expected completion errors. The executor runs these steps; it decides none of this.
#include "plan/plan.h"
#include "scenario/script_qps.h"

namespace qpo::plan {

// Appends the timeline's steps to each host of `p` (after its bring-up) and fills p.stages.
// `receives`: which QPs scripts own (the planner's one instance).
void plan_timeline(const scenario::Scenario& s, const PlanOptions& o, const scenario::BringupReceives& receives, Plan& p);

class ArgLists;
// A modify step's mask, states, arguments (shared through `lists`) and prediction (planner.cpp).
void describe_modify(Step& st, const scenario::Qp& q, size_t index, ArgLists& lists);
// A fault step's arguments (planner.cpp).
void describe_fault(Step& st, const scenario::Fault& f);

// An ibv_modify_srq step arming the limit (planner.cpp).
void describe_srq_limit(Step& st, uint32_t limit);
// A WaitEvent/ForbidEvent step's event and wait (planner.cpp).
void describe_event(Step& st, const std::string& event, int value, uint64_t within_ms, bool forbid);

// A deterministic pattern seed for a name (FNV-1a).
uint32_t pattern_seed(const std::string& name);

}  // namespace qpo::plan
