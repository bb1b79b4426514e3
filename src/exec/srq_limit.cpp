// Arming an SRQ's limit: ibv_modify_srq(IBV_SRQ_LIMIT) once its receives are posted (bring-up),
// and again in a timeline step after IBV_EVENT_SRQ_LIMIT_REACHED, which disarms it.
#include "exec/steps.h"

namespace qpo::exec {

bool arm_srq_limit(RunState& st, report::RunReport& log, const plan::Step& step, const std::string& phase) {
  auto* ss = st.srqs.find(step.id);
  if (!ss || !ss->srq) return true;  // not created (the run failed already)
  return run_step(log, st.host, phase, step.verb, step.object, "srq_limit=" + std::to_string(step.extra().srq_limit) +
                                                                  " attr_mask=IBV_SRQ_LIMIT",
                  [&] {
                    if (int e = ss->srq->set_limit(step.extra().srq_limit))
                      throw verbs::VerbsError("ibv_modify_srq", step.object, e,
                                              "attr_mask IBV_SRQ_LIMIT, srq_limit " + std::to_string(step.extra().srq_limit));
                  })
             .status != report::StepStatus::Failed;
}

}  // namespace qpo::exec
