// The workers' barrier waits for a party that is late but still moving data: each time the
// limit passes it asks whether the workload's streams progressed, and gives up only when
// they did not. (64 QPs x 128 x 64 KiB writes take longer to drain after a timed run than a
// fixed limit allowed.) The tests drive "progressed" themselves, so nothing depends on how
// fast this machine schedules threads.
#include <doctest/doctest.h>

#include <atomic>
#include <stdexcept>
#include <string>
#include <thread>

#include "lua/barrier.h"
#include "test_threads.h"

using qpo::lua::Barrier;

TEST_CASE("a barrier whose other party made no progress gives up after the limit, and says so") {
  Barrier b(2);
  int asked = 0;
  std::string error;
  try {
    b.arrive_and_wait("write_bw done 65536", {}, 20, [&] {
      ++asked;
      return false;
    });
  } catch (const std::runtime_error& e) {
    error = e.what();
  }
  CHECK(asked == 1);
  CHECK(error ==
        "barrier 'write_bw done 65536': the other workers did not arrive within 20 ms, and no stream of this "
        "workload completed work in that time");
}

TEST_CASE("a barrier keeps waiting while the workload progresses, past several limits") {
  Barrier b(2);
  std::atomic<int> asked{0};
  std::atomic<bool> may_arrive{false};
  qpo::testing::WorkerThread late([&] {
    while (!may_arrive) std::this_thread::yield();
    try {
      b.arrive_and_wait("done", {}, 1000);
    } catch (const std::runtime_error&) {
      // the waiter below already gave up (a regression): its check fails, this must not hang
    }
  });
  // Progress every time it is asked; the late party is let in only after the third limit
  // passed, so without the progress check this wait would already have failed twice.
  CHECK_NOTHROW(b.arrive_and_wait("done", {}, 5, [&] {
    if (++asked == 3) may_arrive = true;
    return true;
  }));
  may_arrive = true;
  CHECK(late.join() == "");
  CHECK(asked >= 3);
}

TEST_CASE("while the leader waits for the other hosts, the workers here wait for it, progress or not") {
  Barrier b(2);
  std::atomic<int> asked{0};
  std::atomic<bool> leading{false}, waiter_done{false};
  qpo::testing::WorkerThread leader([&] {
    while (asked == 0) std::this_thread::yield();  // the waiter arrived and passed one limit
    b.arrive_and_wait("write_bw done 65536", [&] {
      leading = true;
      // The cross-host wait: long enough for two more of the waiter's limits with no
      // progress (or until the waiter gave up, which is the failure this test catches).
      int start = asked;
      while (asked < start + 2 && !waiter_done) std::this_thread::yield();
    }, -1);
  });
  std::string error;
  try {
    // Streams "progress" until the leader takes over, so the waiter is still here then.
    b.arrive_and_wait("write_bw done 65536", {}, 5, [&] {
      ++asked;
      return !leading;
    });
  } catch (const std::runtime_error& e) {
    error = e.what();
  }
  waiter_done = true;
  CHECK(leader.join() == "");
  CHECK(error.empty());
  CHECK(asked >= 3);
}

TEST_CASE("without a progress check the limit is absolute") {
  Barrier b(2);
  std::string error;
  try {
    b.arrive_and_wait("start", {}, 10);
  } catch (const std::runtime_error& e) {
    error = e.what();
  }
  CHECK(error == "barrier 'start': the other workers did not arrive within 10 ms");
}
