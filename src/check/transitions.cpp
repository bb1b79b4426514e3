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

// A counted group's member "cli.3" belongs to "cli": its template's errors and its
// mistakes are the group's.
std::string group_of(const std::string& qp) {
  auto dot = qp.rfind('.');
  if (dot == std::string::npos || dot + 1 == qp.size()) return qp;
  for (size_t i = dot + 1; i < qp.size(); ++i)
    if (qp[i] < '0' || qp[i] > '9') return qp;
  return qp.substr(0, dot);
}

// QPs with an error of their own (a `states:` of the wrong shape, an unknown state): their
// followers' states say nothing a workload should be judged by. Keys are QP or group names.
std::unordered_set<std::string> qps_with_errors(const diag::DiagSink& sink) {
  std::unordered_set<std::string> out;
  for (const auto& d : sink.all())
    if (d.severity == diag::Severity::Error && d.path.rfind("qps.", 0) == 0)
      out.insert(d.path.substr(4, d.path.find('.', 4) - 4));
  return out;
}

// Q309: where a workload runs, each initiator must be in RTS (before RTS ibv_post_send fails;
// in SQD its work waits for a resume that a workload never makes) and its connected peer
// past RTR, in RTR, RTS, SQD or SQE (those receive; before RTR a QP drops what arrives, in ERR
// it flushes). What a workload expects is the scenario's claim where it can come true: a
// completion error from a peer that cannot answer, a flush from an initiator in ERR.
class WorkloadStates {
 public:
  WorkloadStates(const scenario::Scenario& s, const std::unordered_map<std::string, StateFollower>& followers,
                 diag::DiagSink& sink)
      : s_(s), followers_(followers), sink_(sink), broken_(qps_with_errors(sink)) {}

  void check(const scenario::TimelineStep& step, const scenario::Ref& ref, const scenario::Workload& w) {
    bool expects_error = w.expect_status && *w.expect_status != "IBV_WC_SUCCESS";
    for (const auto& init : w.initiators()) {
      auto st = state_of(init.name);
      if (st && *st != spec::QpState::RTS && !(expects_error && *st == spec::QpState::ERR))
        report(step, ref, w, init.name, *st, true);
      const scenario::Qp* q = s_.qp(init.name);
      if (!q || !q->connect || expects_error) continue;
      auto peer = state_of(q->connect.name);
      if (peer && !receives(*peer)) report(step, ref, w, q->connect.name, *peer, false);
    }
  }

 private:
  static bool receives(spec::QpState s) {
    return s == spec::QpState::RTR || s == spec::QpState::RTS || s == spec::QpState::SQD || s == spec::QpState::SQE;
  }

  std::optional<spec::QpState> state_of(const std::string& qp) const {
    if (broken_.count(qp) || broken_.count(group_of(qp))) return std::nullopt;  // its own error says what is wrong
    auto it = followers_.find(qp);
    if (it == followers_.end()) return std::nullopt;
    return it->second.state();
  }

  void report(const scenario::TimelineStep& step, const scenario::Ref& ref, const scenario::Workload& w,
              const std::string& qp, spec::QpState state, bool initiator) {
    // A group's members are alike: its mistake is reported once, for the first member.
    std::string key = step.path + "|" + (w.group.empty() ? w.name : w.group) + "|" + group_of(qp) + "|" +
                      spec::state_name(state) + (initiator ? "|i" : "|p");
    if (!reported_.insert(key).second) return;
    bool written = step.path.rfind("timeline", 0) == 0;  // not the loader's default order
    auto& d = sink_.error("Q309", written && ref.loc.given() ? ref.loc : w.loc, written ? step.path : "workloads." + w.name,
                          "workload '" + w.name + "' runs while its " + (initiator ? "initiator" : "peer") + " QP '" +
                              qp + "' is in " + spec::state_name(state) + ", not " +
                              (initiator ? "RTS" : "RTR, RTS, SQD or SQE"));
    if (initiator) {
      d.rule = "a send queue sends only in RTS (before RTS ibv_post_send fails; in SQD work waits; in ERR it is flushed)";
      d.hint = "bring '" + qp + "' to RTS before this step" +
               (state == spec::QpState::ERR ? std::string(", or expect the flush: `expect: { status: IBV_WC_WR_FLUSH_ERR }`")
                                            : std::string());
    } else {
      d.rule = "a QP receives from RTR on (before RTR it drops what arrives; in ERR it flushes)";
      d.hint = "bring '" + qp + "' to RTR or later before this step, or say what the sender meets with "
               "`expect: { status: ... }` (RC: IBV_WC_RETRY_EXC_ERR)";
    }
  }

  const scenario::Scenario& s_;
  const std::unordered_map<std::string, StateFollower>& followers_;
  diag::DiagSink& sink_;
  const std::unordered_set<std::string> broken_;
  std::unordered_set<std::string> reported_;
};

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
  WorkloadStates workload_states(s, followers, sink);
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
        if (const auto* w = s.workload(ref.name)) workload_states.check(step, ref, *w);
      for (const auto& ref : step.workloads)
        if (const auto* w = s.workload(ref.name))
          for (const auto& [qp, state] : scenario::states_after_expected_error(s, *w))
            if (auto it = followers.find(qp); it != followers.end()) it->second.enter(state);
    }
  }
}

}  // namespace qpo::check
