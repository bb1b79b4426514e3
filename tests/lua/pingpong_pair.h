#pragma once
// Runs both sides of a ping-pong at once, as the Lua runtime's two workers do: the target on a
// thread of its own, both released together by one barrier (each side's `ready`). An exception
// on the target's side fails the test with its message; the initiator's propagates.
#include <doctest/doctest.h>

#include <atomic>
#include <string>
#include <thread>

#include "dataplane/pingpong.h"

namespace qpo::dataplane::testing {

struct PingPongPair {
  PingPongResult initiator, target;
};

inline PingPongPair run_pingpong_pair(const StreamLane& initiator, PingPongConfig ci, const StreamLane& target,
                                      PingPongConfig ct) {
  std::atomic<int> ready{0};
  auto barrier = [&] {
    ready.fetch_add(1);
    while (ready.load() < 2) std::this_thread::yield();
  };
  ci.ready = ct.ready = barrier;
  PingPongPair r;
  std::string err;
  std::thread t([&] {
    try {
      r.target = run_pingpong(target, ct);
    } catch (const std::exception& e) {
      err = e.what();
    }
  });
  try {
    r.initiator = run_pingpong(initiator, ci);
  } catch (...) {
    t.join();
    throw;
  }
  t.join();
  REQUIRE_MESSAGE(err.empty(), "target: " << err);
  return r;
}

}  // namespace qpo::dataplane::testing
