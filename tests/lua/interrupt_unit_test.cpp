// Stopping workers busy in Lua code, without a device: a host told to stop (the phase
// timeout found it late) interrupts a pure-Lua loop at once with the reason and the script's
// line, a pcall in the script cannot swallow it, a worker waiting in C++ (qpo.sleep) stops
// too, so is a report() that never returns, and after a SIGINT a loop that never asks
// w:running() is interrupted after a grace period. Each run is bounded: a regression hangs
// the test binary, and ctest's timeout fails it.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "lua/workload.h"
#include "lua_fixture.h"
#include "test_threads.h"

using qpo::test::FakeEndpoints;
using qpo::test::run_inline;

namespace {

struct Timed {
  qpo::lua::WorkloadResult result;
  double seconds = 0;
};

// Runs `source` on two workers; sets `flag` (cb.cancel, or cb.stop when `sigint`) after 300 ms.
Timed run_and_stop(const std::string& source, bool sigint) {
  FakeEndpoints f;
  std::atomic<bool> flag{false};
  std::string why = "stopped: no answer within 5 s during workload 'w' (--phase-timeout)";
  qpo::lua::Callbacks cb;
  if (sigint) {
    cb.stop = &flag;
  } else {
    cb.cancel = &flag;
    cb.cancel_why = &why;
  }
  qpo::testing::WorkerThread later([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    flag.store(true);
  });
  auto t0 = std::chrono::steady_clock::now();
  Timed t;
  t.result = run_inline(f, source, 2, true, qpo::lua::Value::table(), cb);
  t.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(later.join() == "");
  return t;
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("a host told to stop interrupts a pure-Lua loop at once, naming the reason and the line") {
  auto t = run_and_stop("function run(w)\n  local n = 0\n  while true do n = n + 1 end\nend\n", false);
  CHECK_FALSE(t.result.ok);
  CHECK(t.seconds < 30);  // loose: the box may be busy; unstopped, it never ends
  REQUIRE(t.result.workers.size() == 2);
  for (const auto& w : t.result.workers) {
    INFO(w.error);
    CHECK_FALSE(w.ok);
    CHECK(contains(w.error, "inline.lua:3: stopped: no answer within 5 s during workload 'w' (--phase-timeout)"));
  }
}

TEST_CASE("a pcall in the script cannot swallow the interrupt") {
  auto t = run_and_stop("function run(w)\n  while true do pcall(function() while true do end end) end\nend\n", false);
  CHECK_FALSE(t.result.ok);
  CHECK(t.seconds < 30);  // loose: the box may be busy; unstopped, it never ends
  CHECK(contains(t.result.error, "stopped: no answer within 5 s"));
}

TEST_CASE("a worker looping on qpo.sleep (in C++ most of the time) is interrupted too") {
  auto t = run_and_stop("function run(w)\n  while true do qpo.sleep(0.05) end\nend\n", false);
  CHECK_FALSE(t.result.ok);
  CHECK(t.seconds < 30);  // loose: the box may be busy; unstopped, it never ends
  INFO(t.result.error);
  CHECK(contains(t.result.error, "inline.lua:2: stopped"));
}

TEST_CASE("after a SIGINT a worker that checks w:running() ends on its own, with its result") {
  auto t = run_and_stop("function run(w)\n  local n = 0\n  while w:running() do n = n + 1 end\n  return { n = n }\nend\n", true);
  CHECK(t.result.ok);
  CHECK(t.seconds < 30);  // ok above says it ended on its own, not at the grace period
}

TEST_CASE("after a SIGINT a loop that never asks w:running() is interrupted after the grace period") {
  auto t = run_and_stop("function run(w)\n  while true do end\nend\n", true);
  CHECK_FALSE(t.result.ok);
  CHECK(t.seconds >= 3);
  CHECK(t.seconds < 30);  // loose: unstopped, it never ends
  INFO(t.result.error);
  CHECK(contains(t.result.error, "inline.lua:2: interrupted (SIGINT)"));
}

TEST_CASE("a workload that is not stopped runs to its end undisturbed") {
  FakeEndpoints f;
  std::atomic<bool> cancel{false}, stop{false};
  std::string why = "never";
  qpo::lua::Callbacks cb;
  cb.cancel = &cancel;
  cb.cancel_why = &why;
  cb.stop = &stop;
  auto r = run_inline(f, "function run(w)\n  local n = 0\n  for i = 1, 2000000 do n = n + i end\n  qpo.sleep(0.6)\n  return { n = n }\nend\n",
                      2, true, qpo::lua::Value::table(), cb);
  CHECK(r.ok);
  CHECK(r.workers[0].result.find("n")->as_int() == int64_t{2000001000000});
}

TEST_CASE("a report() that never returns is interrupted too, when the host is told to stop") {
  FakeEndpoints f;
  std::atomic<bool> cancel{false};
  std::string why = "stopped: no answer within 5 s during the stage after 'workloads wave 1' (--phase-timeout)";
  qpo::lua::Callbacks cb;
  cb.cancel = &cancel;
  cb.cancel_why = &why;
  qpo::testing::WorkerThread later([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    cancel.store(true);
  });
  auto t0 = std::chrono::steady_clock::now();
  auto r = run_inline(f, "function run(w) return { n = 1 } end\nfunction report(results)\n  while true do end\nend\n", 1,
                      true, qpo::lua::Value::table(), cb);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(later.join() == "");
  CHECK_FALSE(r.ok);
  CHECK(seconds < 30);  // loose: the box may be busy; unstopped, it never ends
  INFO(r.error);
  CHECK(contains(r.error, "report(): inline.lua:3: stopped: no answer within 5 s"));
  CHECK(r.workers[0].ok);  // the worker itself had finished
}

TEST_CASE("a loop inside a coroutine (coroutine.wrap) is interrupted too") {
  auto t = run_and_stop("function run(w)\n  local f = coroutine.wrap(function() while true do end end)\n  f()\nend\n", false);
  CHECK_FALSE(t.result.ok);
  INFO(t.result.error);
  CHECK(contains(t.result.error, "stopped: no answer within 5 s during workload 'w' (--phase-timeout)"));
}

TEST_CASE("a loop inside a resumed coroutine is interrupted, and so is the worker that resumed it") {
  auto t = run_and_stop(
      "function run(w)\n  local co = coroutine.create(function() while true do end end)\n"
      "  local ok, err = coroutine.resume(co)\n  return err\nend\n",
      false);
  CHECK_FALSE(t.result.ok);
  REQUIRE(t.result.workers.size() == 2);
  for (const auto& w : t.result.workers) {
    INFO(w.error);
    CHECK_FALSE(w.ok);
    CHECK(contains(w.error, "stopped: no answer within 5 s"));
  }
}
