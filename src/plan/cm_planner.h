#pragma once
// rdma_cm connections (`cm:` on a QP) in the plan: the CM calls are typed steps, in stages so
// the hosts meet between them (plan.h StepKind::Cm*):
//   stage "cm listen":   every host with a CM QP makes its event channel and ids; passive
//                        sides bind and listen. The stage's meeting is the ordering that
//                        puts every listener up before any active side connects.
//   stage "cm connect":  active: resolve address and route, INIT, receives, connect, then
//                        INIT (the access flags the REP grants), RTR, RTS, establish (UD:
//                        INIT/RTR/RTS before connect, ESTABLISHED carries the peer's QPN and
//                        qkey); passive: the request, INIT, receives, RTR, accept, RTS - or reject.
//                        An expected CM event ends the active side's flow at the step it comes.
//   stage "cm disconnect" (after the timeline): RC/UC pairs disconnect.
//   teardown: every id (connections, then listeners) before the QPs, then the channel.
#include "plan/plan.h"
#include "scenario/script_qps.h"

namespace qpo::plan {

// `receives`: each QP's bring-up receive count (the planner's one instance).
void plan_cm_connect(const scenario::Scenario& s, const scenario::BringupReceives& receives, Plan& p);
void plan_cm_disconnect(const scenario::Scenario& s, Plan& p);
void plan_cm_teardown(const scenario::Scenario& s, HostPlan& hp);

// The event an active side's connect waits for: RDMA_CM_EVENT_CONNECT_RESPONSE (RC/UC) or
// RDMA_CM_EVENT_ESTABLISHED (UD); "RDMA_CM_EVENT_" + the expected event when one is expected.
std::string cm_event_name(const std::string& short_name);  // "REJECTED" -> "RDMA_CM_EVENT_REJECTED"

}  // namespace qpo::plan
