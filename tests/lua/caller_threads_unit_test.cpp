// Callbacks::start: a script's workers as threads of the caller's set (exec's stage sides).
// run_workload starts every worker through it, returns once their bodies have ended, and a
// worker the caller cannot start fails the workload with the caller's words. No device.
#include <doctest/doctest.h>

#include <atomic>
#include <optional>
#include <string>

#include "lua/workload.h"
#include "lua_fixture.h"
#include "util/thread_group.h"

using qpo::test::FakeEndpoints;
using qpo::test::run_inline;

namespace {

const char* kCount = R"(
function run(w) return { n = 1 } end
function report(results)
  local sum = 0
  for _, r in pairs(results) do sum = sum + r.result.n end
  return { sum = sum }
end
)";

}  // namespace

TEST_CASE("with Callbacks::start every worker runs on a thread the caller started, and has ended when run_workload returns") {
  FakeEndpoints f;
  qpo::util::ThreadGroup caller;
  int started = 0;
  qpo::lua::Callbacks cb;
  cb.start = [&](std::function<void()> body) -> std::optional<std::string> {
    ++started;
    return caller.start(std::move(body));
  };
  auto r = run_inline(f, kCount, 2, true, qpo::lua::Value::table(), cb);
  caller.join();
  REQUIRE_MESSAGE(r.ok, r.error);
  CHECK(started == 2);
  CHECK(r.summary.find("sum")->as_int() == 2);
  CHECK(caller.escaped() == "");
}

TEST_CASE("a worker the caller cannot start fails the workload with the caller's words, and stops the others") {
  FakeEndpoints f;
  qpo::util::ThreadGroup caller;
  int calls = 0;
  qpo::lua::Callbacks cb;
  cb.start = [&](std::function<void()> body) -> std::optional<std::string> {
    if (++calls == 2) return std::string("cannot start a thread: no more (test)");
    return caller.start(std::move(body));
  };
  // The initiator runs until the workload stops it: the target that never started does.
  auto r = run_inline(f, "function initiator(w) while w:running() do end return {} end\nfunction target(w) return {} end\n", 2,
                      true, qpo::lua::Value::table(), cb);
  caller.join();
  CHECK_FALSE(r.ok);
  CHECK(r.error == "worker 'qb' (target): cannot start a thread: no more (test)");
  REQUIRE(r.workers.size() == 2);
  CHECK(r.workers[0].ok);
}
