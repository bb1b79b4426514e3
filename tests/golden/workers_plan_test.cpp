// `qpo plan` shows a workload's threads (issue 20): on an op workload written on a group, each
// member's step says how many threads share the group, which one drives it (the members split
// in order, a contiguous share each, as exec runs them) and its CPU under `pin:`; the default
// (one thread) is marked [default]; a script's `workers:` as written. Text and JSON.
#include <doctest/doctest.h>

#include <string>

#include "plan/plan.h"
#include "unit/scenario_fixture.h"
#include "util/json_writer.h"

namespace {

// Five counted RC pairs (cli.I connects srv.I) on one device, with the workloads given.
std::string five_pairs(const std::string& workloads) {
  return "version: 1\n"
         "devices: { d: { name: auto } }\n"
         "mrs:\n"
         "  src: { pd: d, size: 64KiB, access: [local_write] }\n"
         "  dst: { pd: d, size: 64KiB, access: [local_write, remote_write], per_qp: srv }\n"
         "cqs: { c: { device: d, depth: 4096 } }\n"
         "qps:\n"
         "  cli: { count: 5, pd: d, type: RC, send_cq: c, recv_cq: c, connect: srv,\n"
         "         states: { INIT: { qp_access_flags: [remote_write] }, RTR: {}, RTS: {} } }\n"
         "  srv: { count: 5, pd: d, type: RC, send_cq: c, recv_cq: c, connect: cli,\n"
         "         states: { INIT: { qp_access_flags: [remote_write] }, RTR: {}, RTS: {} } }\n"
         "workloads:\n" +
         workloads;
}

qpo::plan::Plan plan_of(const std::string& text) {
  auto l = qpo::test::load_validate(text);
  REQUIRE_MESSAGE(l.errors() == 0, l.dump());
  return qpo::plan::build_plan(*l.checked);
}

// The text of one workload step of `p` from its verb on (the step number is the planner's
// business), with its argument lines (indented 10).
std::string step_text(const qpo::plan::Plan& p, const std::string& workload) {
  std::string all = qpo::plan::render_text(p);
  auto at = all.find("  workload " + workload + "\n");
  REQUIRE(at != std::string::npos);
  at += 2;
  auto end = all.find('\n', at) + 1;
  while (end < all.size() && all.compare(end, 10, std::string(10, ' ')) == 0) end = all.find('\n', end) + 1;
  return all.substr(at, end - at);
}

const std::string kWrite = "{ qp: cli, op: rdma_write, local_mr: src, remote_mr: dst, size: 4KiB, iterations: 10";

}  // namespace

TEST_CASE("plan: each member of a group's op workload shows its thread and CPU") {
  auto p = plan_of(five_pairs("  w: " + kWrite + ", workers: 2, pin: [3, 5] }\n"));
  // Five members into two threads: w.0, w.1 on thread 1 (CPU 3), w.2 .. w.4 on thread 2 (CPU 5).
  CHECK(step_text(p, "w.1") ==
        "workload w.1\n"
        "          qp=cli.1\n"
        "          op=IBV_WR_RDMA_WRITE\n"
        "          local_mr=src\n"
        "          remote_mr=dst.1\n"
        "          remote addr/rkey=peer (known after exchange)\n"
        "          size=4096\n"
        "          iterations=10\n"
        "          workers=2 (thread 1 drives this QP and 1 more of w)\n"
        "          pin=3,5 (thread 1 on CPU 3)\n");
  CHECK(step_text(p, "w.2").find("          workers=2 (thread 2 drives this QP and 2 more of w)\n"
                                 "          pin=3,5 (thread 2 on CPU 5)\n") != std::string::npos);
}

TEST_CASE("plan: a group's op workload without workers: is one thread, marked [default]") {
  auto p = plan_of(five_pairs("  w: " + kWrite + " }\n"));
  std::string t = step_text(p, "w.4");
  CHECK(t.find("          workers=1 (thread 1 drives this QP and 4 more of w) [default]\n") != std::string::npos);
  CHECK(t.find("pin=") == std::string::npos);
}

TEST_CASE("plan: more workers than members: one thread per QP, each its own") {
  auto p = plan_of(five_pairs("  w: " + kWrite + ", workers: 8 }\n"));
  CHECK(step_text(p, "w.3").find("          workers=5 (thread 4 drives this QP)\n") != std::string::npos);
}

TEST_CASE("plan JSON: workers and pin are args of the workload step") {
  auto p = plan_of(five_pairs("  w: " + kWrite + ", workers: 2, pin: [1] }\n"));
  qpo::util::JsonWriter w;
  qpo::plan::render_json(w, p);
  std::string json = w.str();
  CHECK(json.find("\"name\": \"workers\",\n") != std::string::npos);
  auto at = json.find("\"value\": \"2\"", json.find("\"name\": \"workers\""));
  CHECK(at != std::string::npos);
  CHECK(json.find("\"note\": \"thread 2 drives this QP and 2 more of w\"") != std::string::npos);
  CHECK(json.find("\"note\": \"thread 2 on CPU 1\"") != std::string::npos);
}
