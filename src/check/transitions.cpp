// Each QP's bring-up (`states:`) from RESET, then the timeline in order, so a QP's state at
// each step is what the steps before it left, whichever QP or workload they were about
// (state_follower.h).
#include <unordered_map>

#include "check/state_follower.h"
#include "check/validate.h"
#include "scenario/timeline.h"

namespace qpo::check {

void check_transitions(scenario::Scenario& s, diag::DiagSink& sink) {
  std::unordered_map<std::string, StateFollower> followers;
  // The members of a counted group share one list of transitions (util/shared_list.h): the
  // first member's bring-up elaborates it (a copy, so the loaded model stays as it was) and
  // the others take the elaborated list and its end state. Their QPs are alike (type, caps,
  // a peer or none), so the result would be the same, and a mistake is reported once.
  struct Elaborated {
    util::SharedList<scenario::Transition> transitions;
    spec::QpState end = spec::QpState::RESET;
  };
  std::unordered_map<const void*, Elaborated> done;
  for (auto& q : s.qps) {
    if (q.type < 0) continue;
    const auto& info = spec::RuleTable::builtin().types()[static_cast<size_t>(q.type)];
    if (!info.user) {
      auto& d = sink.error("Q304", q.type_loc, "qps." + q.name + ".type",
                           info.name + " QPs are created by the kernel, not with ibv_create_qp");
      d.hint = "use RC, UC, UD, XRC_SEND, XRC_RECV or RAW_PACKET";
      continue;
    }
    auto& follower = followers.try_emplace(q.name, q, sink).first->second;
    const void* shared = q.transitions.identity();
    if (auto it = shared ? done.find(shared) : done.end(); it != done.end()) {
      q.transitions = it->second.transitions;
      follower.enter(it->second.end);
      continue;
    }
    for (auto& t : q.transitions.edit())
      if (t.bring_up) follower.apply(t);
    if (q.cm.brings_up()) follower.enter(q.cm.end_state());  // rdma_cm's INIT/RTR/RTS (check/cm.cpp)
    if (shared) done.emplace(shared, Elaborated{q.transitions, follower.state()});
  }
  for (const auto& step : s.timeline) {
    if (step.kind == scenario::TimelineStep::Kind::Transition) {
      for (const auto& [name, index] : step.transitions) {
        auto it = followers.find(name);
        if (it == followers.end()) continue;
        auto& q = s.qps[static_cast<size_t>(s.qp_ordinal(name))];
        it->second.apply(q.transitions.edit()[index]);  // this QP's own list from here
      }
    } else if (step.kind == scenario::TimelineStep::Kind::Workloads) {
      for (const auto& ref : step.workloads)
        if (const auto* w = s.workload(ref.name))
          for (const auto& [qp, state] : scenario::states_after_expected_error(s, *w))
            if (auto it = followers.find(qp); it != followers.end()) it->second.enter(state);
    }
  }
}

}  // namespace qpo::check
