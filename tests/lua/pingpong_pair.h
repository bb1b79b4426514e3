#pragma once
// Runs both sides of a ping-pong at once, as the Lua runtime's two workers do: the target on a
// thread of its own, both released together by one barrier (each side's `ready`). An exception
// on the target's side fails the test with its message; the initiator's propagates.
#include <doctest/doctest.h>

#include <string>

#include "dataplane/pingpong.h"
#include "test_threads.h"

namespace qpo::dataplane::testing {

struct PingPongPair {
  PingPongResult initiator, target;
};

inline PingPongPair run_pingpong_pair(const StreamLane& initiator, PingPongConfig ci, const StreamLane& target,
                                      PingPongConfig ct) {
  qpo::testing::Rendezvous meet;
  ci.ready = ct.ready = meet.ready();
  PingPongPair r;
  qpo::testing::WorkerThread t([&] { r.target = run_pingpong(target, ct); }, &meet);
  r.initiator = run_pingpong(initiator, ci);  // if it throws, t's destructor releases and joins the target
  const std::string err = t.join();
  REQUIRE_MESSAGE(err.empty(), "target: " << err);
  return r;
}

}  // namespace qpo::dataplane::testing
