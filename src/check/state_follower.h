#pragma once
// One QP's state, followed call by call through its ibv_modify_qp steps. check_transitions
// drives one follower per QP over its `states:`, then over the timeline's steps in order
// (transitions interleaved across QPs, expected completion errors moving QPs to ERR).
#include "diag/diagnostic.h"
#include "scenario/model.h"
#include "spec/rules.h"

namespace qpo::check {

class StateFollower {
 public:
  StateFollower(const scenario::Qp& qp, diag::DiagSink& sink) : qp_(qp), sink_(sink) {}

  // Where the QP is now (RESET after ibv_create_qp).
  spec::QpState state() const { return state_; }

  // One modify of this QP, from state(): fills in defaults of required attributes, sets
  // t.from, t.mask and the rule tables' verdict, and reports what the kernel would reject
  // (unless `expect:` names that failure). Then moves on and returns the new state:
  //   accepted                        -> t.to
  //   rejected, expected (EINVAL)     -> unchanged: the kernel refused, the QP stayed
  //   rejected, not expected (errors) -> t.to: the user meant the QP to be there, so later
  //                                      steps are judged from it and each mistake is
  //                                      reported once, at its own line
  spec::QpState apply(scenario::Transition& t);

  // A state change that is no modify of ours (e.g. an expected completion error moving an
  // RC QP to ERR).
  void enter(spec::QpState s) { state_ = s; }

 private:
  spec::QpState check(scenario::Transition& t);
  void fill_defaults(scenario::Transition& t, spec::Mask required);
  void inherit_own_states(scenario::Transition& t);
  void report_peer_without_connect(const scenario::Transition& t);
  void report(const scenario::Transition& t);

  const scenario::Qp& qp_;
  diag::DiagSink& sink_;
  spec::QpState state_ = spec::QpState::RESET;
};

}  // namespace qpo::check
