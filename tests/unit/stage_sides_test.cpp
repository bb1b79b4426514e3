// exec::StageSides, the one set of threads of a stage's workloads: a side that fails halts
// the others and keeps its words, a stop request halts them all, wait() waits for the
// workers a side started, and a stage left early still halts and joins its sides.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>

#include "dataplane/error.h"
#include "exec/stage_sides.h"

using qpo::exec::StageSides;

namespace {

void until_halted(const StageSides& sides) {
  while (!sides.halted()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

}  // namespace

TEST_CASE("a side that throws halts the stage: the others end, its words are kept, the scripts are cancelled") {
  StageSides sides(nullptr);
  std::string waiting_error, failing_error;
  bool waiting_timed_out = false, failing_timed_out = false;
  sides.start(waiting_error, waiting_timed_out, [&] { until_halted(sides); });
  sides.start(failing_error, failing_timed_out, [] { throw std::runtime_error("QP 'qa': completion IBV_WC_REM_ACCESS_ERR"); });
  sides.wait();
  CHECK(failing_error == "QP 'qa': completion IBV_WC_REM_ACCESS_ERR");
  CHECK_FALSE(failing_timed_out);
  CHECK(waiting_error.empty());
  CHECK(sides.halted());
  CHECK(sides.scripts_cancel()->load());
  CHECK(*sides.scripts_cancel_why() == qpo::exec::kStageSideFailed);
}

TEST_CASE("a data path timeout is kept as the side's timeout") {
  StageSides sides(nullptr);
  std::string error;
  bool timed_out = false;
  sides.start(error, timed_out, [] {
    throw qpo::dataplane::DataplaneError(qpo::dataplane::DataplaneError::Kind::Timeout, "qa", "no completion in 2000 ms");
  });
  sides.wait();
  CHECK(timed_out);
  CHECK(error.find("no completion in 2000 ms") != std::string::npos);
}

TEST_CASE("the other hosts' stop request halts every side; the scripts are cancelled with its words") {
  qpo::exec::StopRequest told;
  StageSides sides(&told);
  std::string e1, e2;
  bool t1 = false, t2 = false;
  sides.start(e1, t1, [&] { until_halted(sides); });
  sides.start(e2, t2, [&] {
    told.why = "host b failed at step 14";
    told.requested.store(true, std::memory_order_release);
  });
  sides.wait();
  CHECK(e1.empty());
  CHECK(e2.empty());
  CHECK(sides.halted());
  CHECK(*sides.scripts_cancel_why() == "host b failed at step 14");
}

TEST_CASE("wait() returns once the workers a side started have ended too") {
  StageSides sides(nullptr);
  std::atomic<bool> worker_done{false};
  std::string error, worker_start;
  bool timed_out = false;
  sides.start(error, timed_out, [&] {
    auto why = sides.start_worker([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      worker_done = true;
    });
    if (why) worker_start = *why;
  });
  sides.wait();
  CHECK(worker_start.empty());
  CHECK(worker_done.load());
  CHECK_FALSE(sides.halted());
}

TEST_CASE("a stage left without wait() halts its sides and joins them") {
  std::atomic<bool> ended{false};
  std::string error;
  bool timed_out = false;
  {
    StageSides sides(nullptr);
    sides.start(error, timed_out, [&] {
      until_halted(sides);
      ended = true;
    });
  }
  CHECK(ended.load());
}
