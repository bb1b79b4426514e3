// Each QP's transitions, `states:` then `transitions:`, followed from RESET (state_follower.h).
#include "check/state_follower.h"
#include "check/validate.h"

namespace qpo::check {

void check_transitions(scenario::Scenario& s, diag::DiagSink& sink) {
  for (auto& q : s.qps) {
    if (q.type < 0) continue;
    const auto& info = spec::RuleTable::builtin().types()[static_cast<size_t>(q.type)];
    if (!info.user) {
      auto& d = sink.error("Q304", q.type_loc, "qps." + q.name + ".type",
                           info.name + " QPs are created by the kernel, not with ibv_create_qp");
      d.hint = "use RC, UC, UD, XRC_SEND, XRC_RECV or RAW_PACKET";
      continue;
    }
    StateFollower follower(q, sink);
    for (auto& t : q.transitions) follower.apply(t);
  }
}

}  // namespace qpo::check
