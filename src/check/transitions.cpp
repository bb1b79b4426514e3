// Each QP's bring-up (`states:`) from RESET, then the timeline in order, so a QP's state at
// each step is what the steps before it left, whichever QP or workload they were about
// (state_follower.h).
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "check/state_follower.h"
#include "check/validate.h"
#include "scenario/timeline.h"

namespace qpo::check {

namespace {

// Q309: where a workload runs, each initiator must be in RTS (before RTS ibv_post_send fails,
// in SQD the work waits for a resume that a workload never makes) and its connected peer in
// RTR or RTS (before RTR it drops what arrives, in ERR it flushes). A workload that expects a
// completion error is the scenario's claim.
void check_workload_states(const scenario::Scenario& s, const scenario::TimelineStep& step, const scenario::Ref& ref,
                           const scenario::Workload& w, const std::unordered_map<std::string, StateFollower>& followers,
                           const std::unordered_set<std::string>& broken, diag::DiagSink& sink) {
  if (w.expect_status) return;
  auto state_of = [&](const std::string& qp) -> std::optional<spec::QpState> {
    if (broken.count(qp)) return std::nullopt;  // its own error already says what is wrong
    auto it = followers.find(qp);
    if (it == followers.end()) return std::nullopt;
    return it->second.state();
  };
  auto report = [&](const std::string& qp, spec::QpState state, const std::string& role, const std::string& needs) {
    bool written = step.path.rfind("timeline", 0) == 0;  // not the loader's default order
    auto& d = sink.error("Q309", written && ref.loc.given() ? ref.loc : w.loc, written ? step.path : "workloads." + w.name,
                         "workload '" + w.name + "' runs while its " + role + " QP '" + qp + "' is in " +
                             spec::state_name(state) + ", not " + needs);
    d.rule = role == "initiator"
                 ? "a send queue sends only in RTS (before RTS ibv_post_send fails; in SQD work waits, in ERR it is flushed)"
                 : "a QP receives only in RTR or RTS (before RTR it drops what arrives; in ERR it flushes)";
    d.hint = "bring '" + qp + "' to " + (role == "initiator" ? std::string("RTS") : std::string("RTR or RTS")) +
             " before this step, or say what the workload meets with `expect: { status: ... }`";
  };
  for (const auto& init : w.initiators()) {
    auto st = state_of(init.name);
    if (!st) continue;
    if (*st != spec::QpState::RTS) report(init.name, *st, "initiator", "RTS");
    const scenario::Qp* q = s.qp(init.name);
    if (!q || !q->connect) continue;
    auto peer = state_of(q->connect.name);
    if (peer && *peer != spec::QpState::RTR && *peer != spec::QpState::RTS)
      report(q->connect.name, *peer, "peer", "RTR or RTS");
  }
}

// QPs with an error of their own (a `states:` of the wrong shape, an unknown state): their
// followers' states say nothing a workload should be judged by.
std::unordered_set<std::string> qps_with_errors(const diag::DiagSink& sink) {
  std::unordered_set<std::string> out;
  for (const auto& d : sink.all())
    if (d.severity == diag::Severity::Error && d.path.rfind("qps.", 0) == 0)
      out.insert(d.path.substr(4, d.path.find('.', 4) - 4));
  return out;
}

}  // namespace

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
  const auto broken = qps_with_errors(sink);
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
        if (const auto* w = s.workload(ref.name)) check_workload_states(s, step, ref, *w, followers, broken, sink);
      for (const auto& ref : step.workloads)
        if (const auto* w = s.workload(ref.name))
          for (const auto& [qp, state] : scenario::states_after_expected_error(s, *w))
            if (auto it = followers.find(qp); it != followers.end()) it->second.enter(state);
    }
  }
}

}  // namespace qpo::check
