// run_workload's cross-host hooks without a device: report() sees the workers of other hosts
// that Callbacks::gather brings, a failure elsewhere fails the workload here, and w:barrier()
// calls Callbacks::barrier with the script's tag. One behaviour per test case.
#include <doctest/doctest.h>

#include <stdexcept>

#include "lua/workload.h"
#include "lua_fixture.h"

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
