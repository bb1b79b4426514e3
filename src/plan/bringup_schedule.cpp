#include "plan/bringup_schedule.h"

#include <stdexcept>
#include <string>

#include "plan/plan.h"

namespace qpo::plan {

BringUpSchedule schedule_bringup(const Plan& p, const HostPlan& h) {
  BringUpSchedule s;
  std::vector<uint32_t> chain_of(p.qp_count(), BringUpSchedule::kNone);  // QP id -> its number in creates
  std::vector<uint32_t> slots_of(p.qp_count(), BringUpSchedule::kNone);  // QP id -> its RegSlots step
  for (const auto& step : h.steps)
    if (step.kind == StepKind::RegSlots && step.setup == Step::kNoSetup && step.id < slots_of.size())
      slots_of[step.id] = static_cast<uint32_t>(step.index - 1);
  for (const auto& step : h.steps) {
    if (step.phase != Phase::Setup || step.kind != StepKind::CreateQp) continue;
    if (step.id >= chain_of.size())  // the planner gives every QP step its QP's id
      throw std::logic_error("plan step " + std::to_string(step.index) + " creates QP '" + step.object + "' with no QP id");
    chain_of[step.id] = static_cast<uint32_t>(s.creates.size());
    s.creates.push_back(static_cast<uint32_t>(step.index - 1));
    s.slots.push_back(slots_of[step.id]);
  }
  int half = 0;
  for (const auto& step : h.steps) {
    if (step.phase == Phase::Exchange) half = 1;
    if (step.phase != Phase::BringUp || step.stage >= 0) continue;  // a stage's (rdma_cm): the timeline runs it
    bool on_qp = step.kind == StepKind::Modify || step.kind == StepKind::PostRecv;
    if (!on_qp && step.kind != StepKind::PostSrqRecv && step.kind != StepKind::ModifySrq) continue;
    uint32_t chain = on_qp && step.id < chain_of.size() ? chain_of[step.id] : BringUpSchedule::kNone;
    if (on_qp && chain == BringUpSchedule::kNone) continue;  // not this host's QP (the planner lists only its own)
    s.halves[half].steps.push_back(static_cast<uint32_t>(step.index - 1));
    s.halves[half].chain.push_back(chain);
  }
  for (auto& hv : s.halves) {  // each QP's entries in plan order (CSR)
    hv.first.assign(s.creates.size() + 1, 0);
    for (uint32_t c : hv.chain)
      if (c != BringUpSchedule::kNone) ++hv.first[c + 1];
    for (size_t i = 1; i < hv.first.size(); ++i) hv.first[i] += hv.first[i - 1];
    hv.by_qp.resize(hv.first.back());
    std::vector<uint32_t> next(hv.first.begin(), hv.first.end() - 1);
    for (uint32_t i = 0; i < hv.chain.size(); ++i)
      if (hv.chain[i] != BringUpSchedule::kNone) hv.by_qp[next[hv.chain[i]]++] = i;
  }
  return s;
}

}  // namespace qpo::plan
