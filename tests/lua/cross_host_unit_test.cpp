// run_workload's cross-host hooks without a device: report() sees the workers of other hosts
// that Callbacks::gather brings, a failure elsewhere fails the workload here, and w:barrier()
// calls Callbacks::barrier with the script's tag; w:signal() counters cross hosts through
// Callbacks::signals, and w.workers lists every host's workers. One behaviour per test case.
#include <doctest/doctest.h>

#include <chrono>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "lua/workload.h"
#include "lua_fixture.h"
#include "test_threads.h"

using qpo::test::FakeEndpoints;
using qpo::test::run_inline;

namespace {

const char* kSumReport = R"(
function initiator(w) w:barrier("go") return { n = 1 } end
function report(results)
  local sum, names = 0, {}
  for name, r in pairs(results) do sum = sum + r.result.n; names[#names + 1] = name end
  table.sort(names)
  return { sum = sum, names = table.concat(names, ",") }
end
)";

}  // namespace

TEST_CASE("report() sees the workers another host ran, brought by gather") {
  FakeEndpoints f;
  qpo::lua::Callbacks cb;
  std::vector<std::string> tags;
  cb.barrier = [&](const std::string& tag) { tags.push_back(tag); };
  cb.gather = [](const std::vector<qpo::lua::WorkerResult>& mine, const std::string& error) {
    REQUIRE(error.empty());
    auto all = mine;
    qpo::lua::WorkerResult remote;
    remote.name = "qb";
    remote.role = "target";
    remote.ran = remote.ok = true;
    remote.result = qpo::lua::Value::table();
    remote.result["n"] = 41;
    all.push_back(remote);
    return all;
  };
  auto r = run_inline(f, kSumReport, 1, true, qpo::lua::Value::table(), cb);
  REQUIRE_MESSAGE(r.ok, r.error);
  CHECK(r.summary.find("sum")->as_int() == 42);
  CHECK(r.summary.find("names")->as_string() == "qa,qb");
  CHECK(tags == std::vector<std::string>{"go"});
}

TEST_CASE("a failure on another host, thrown by gather, fails the workload with its text") {
  FakeEndpoints f;
  qpo::lua::Callbacks cb;
  cb.gather = [](const std::vector<qpo::lua::WorkerResult>&, const std::string&) -> std::vector<qpo::lua::WorkerResult> {
    throw std::runtime_error("another host failed: host b after barrier 'go': boom");
  };
  auto r = run_inline(f, kSumReport, 1, true, qpo::lua::Value::table(), cb);
  CHECK_FALSE(r.ok);
  CHECK(r.error == "another host failed: host b after barrier 'go': boom");
}

TEST_CASE("a failing cross-host barrier fails the worker with the barrier's tag and the reason") {
  FakeEndpoints f;
  qpo::lua::Callbacks cb;
  cb.barrier = [](const std::string&) { throw std::runtime_error("another host failed: host b: boom"); };
  std::string seen_error;
  cb.gather = [&](const std::vector<qpo::lua::WorkerResult>& mine, const std::string& error) {
    seen_error = error;
    return mine;
  };
  auto r = run_inline(f, kSumReport, 1, true, qpo::lua::Value::table(), cb);
  CHECK_FALSE(r.ok);
  CHECK(r.error.find("barrier 'go'") != std::string::npos);
  CHECK(r.error.find("another host failed: host b: boom") != std::string::npos);
  CHECK(seen_error == r.error);  // the local failure goes to the other hosts
}

namespace {

// Another host's w:signal() counters, as the run's channel keeps them (exchange.h).
struct FakeHostSignals {
  std::mutex m;
  std::map<std::string, int64_t> totals;
  int calls = 0;
  bool busy = false;  // the channel answers "not now"
  bool exchange(const std::map<std::string, int64_t>& add, std::map<std::string, int64_t>* out) {
    std::lock_guard lock(m);
    ++calls;
    if (busy) return false;
    for (const auto& [k, v] : add) totals[k] += v;
    *out = totals;
    return true;
  }
};

}  // namespace

TEST_CASE("signals from another host reach a worker waiting for them; this host's go out") {
  FakeEndpoints f;
  FakeHostSignals other;
  other.totals["sent"] = 2;  // two senders on another host signaled already
  qpo::lua::Callbacks cb;
  cb.signals = [&](const std::map<std::string, int64_t>& add, std::map<std::string, int64_t>* totals) {
    return other.exchange(add, totals);
  };
  qpo::testing::WorkerThread later([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    std::lock_guard lock(other.m);
    other.totals["sent"] += 1;  // the third, while the worker waits
  });
  auto r = run_inline(f, R"(
function run(w)
  assert(w:signal("mine") == 1)
  local t0 = qpo.now()
  while w:signals("sent") < 3 do
    assert(qpo.now() - t0 < 5, "never saw the other host's signals")
    qpo.sleep(0.01)
  end
  return { sent = w:signals("sent") }
end)", 1, true, qpo::lua::Value::table(), cb);
  CHECK(later.join() == "");
  REQUIRE_MESSAGE(r.ok, r.error);
  CHECK(r.workers[0].result.find("sent")->as_int() == 3);
  CHECK(other.totals["mine"] == 1);
}

TEST_CASE("a busy channel keeps this host's signals and sends them with a later sync") {
  FakeEndpoints f;
  FakeHostSignals other;
  other.busy = true;
  qpo::lua::Callbacks cb;
  cb.signals = [&](const std::map<std::string, int64_t>& add, std::map<std::string, int64_t>* totals) {
    return other.exchange(add, totals);
  };
  qpo::testing::WorkerThread later([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    std::lock_guard lock(other.m);
    other.busy = false;
  });
  auto r = run_inline(f, R"(
function run(w)
  w:signal("a", 2)
  w:signal("a", 3)
  assert(w:signals("a") == 5)   -- this host's own increments show at once
  qpo.sleep(0.5)
  return { a = w:signals("a") }
end)", 1, true, qpo::lua::Value::table(), cb);
  CHECK(later.join() == "");
  REQUIRE_MESSAGE(r.ok, r.error);
  CHECK(r.workers[0].result.find("a")->as_int() == 5);
  CHECK(other.totals["a"] == 5);  // sent once, not lost, not twice
}

TEST_CASE("without a cross-host callback signals stay in this process, as before") {
  FakeEndpoints f;
  auto r = run_inline(f, "function run(w) w:signal('x', 4) return { x = w:signals('x') } end");
  REQUIRE_MESSAGE(r.ok, r.error);
  CHECK(r.workers[0].result.find("x")->as_int() == 4);
}

TEST_CASE("w.workers, w.count and w.index count the workers of every host") {
  FakeEndpoints f;
  qpo::lua::WorkloadSpec spec;
  spec.name = "t";
  spec.script = "inline.lua";
  spec.source = R"(
function run(w)
  local names = {}
  for _, o in ipairs(w.workers) do names[#names + 1] = o.name .. ":" .. o.role end
  return { names = table.concat(names, ","), count = w.count, index = w.index }
end)";
  spec.workers.push_back({"qb", "target", {"qb"}});
  spec.all_workers = {{"s1", "initiator", {"s1"}}, {"s2", "initiator", {"s2"}}, {"qb", "target", {"qb"}}};
  auto r = qpo::lua::run_workload(spec, f.eps);
  REQUIRE_MESSAGE(r.ok, r.error);
  CHECK(r.workers[0].result.find("names")->as_string() == "s1:initiator,s2:initiator,qb:target");
  CHECK(r.workers[0].result.find("count")->as_int() == 3);
  CHECK(r.workers[0].result.find("index")->as_int() == 3);
}
