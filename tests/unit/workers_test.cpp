// `workers:` and `pin:` (issue 20): how many threads drive a workload's QPs and on which CPUs;
// the loader's checks (Q150, Q151), the validator's (Q152), a script's workers split into
// shares, and the pinning helper.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "scenario_fixture.h"
#include "util/cpu_pin.h"
#include "workload/spec.h"

using qpo::test::load_validate;

namespace {

// Four counted RC pairs (cli.I connects srv.I) on one device, with the workload `w` given.
std::string four_pairs(const std::string& workload) {
  return "version: 1\n"
         "devices: { d: { name: auto } }\n"
         "mrs:\n"
         "  src: { pd: d, size: 64KiB, access: [local_write] }\n"
         "  dst: { pd: d, size: 64KiB, access: [local_write, remote_write], per_qp: srv }\n"
         "cqs: { c: { device: d, depth: 2048 } }\n"
         "qps:\n"
         "  cli: { count: 4, pd: d, type: RC, send_cq: c, recv_cq: c, connect: srv,\n"
         "         states: { INIT: { qp_access_flags: [remote_write] }, RTR: {}, RTS: {} } }\n"
         "  srv: { count: 4, pd: d, type: RC, send_cq: c, recv_cq: c, connect: cli,\n"
         "         states: { INIT: { qp_access_flags: [remote_write] }, RTR: {}, RTS: {} } }\n"
         "workloads:\n"
         "  w: " + workload + "\n";
}

const std::string kOp = "{ qp: cli, op: rdma_write, local_mr: src, remote_mr: dst, size: 4KiB";

}  // namespace

TEST_CASE("workers: and pin: reach every member of an op workload on a group") {
  auto l = load_validate(four_pairs(kOp + ", workers: 2, pin: [0, 1] }"));
  REQUIRE_MESSAGE(l.errors() == 0, l.dump());
  const auto& s = *l.scenario;
  REQUIRE(s.workloads.size() == 4);
  for (const auto& w : s.workloads) {
    CHECK(w.workers == 2);
    CHECK(w.pin == std::vector<int64_t>{0, 1});
    CHECK(w.on_group);
  }
}

TEST_CASE("cpus: is another name for pin:") {
  auto l = load_validate(four_pairs(kOp + ", cpus: [3] }"));
  REQUIRE_MESSAGE(l.errors() == 0, l.dump());
  CHECK(l.scenario->workloads[0].pin == std::vector<int64_t>{3});
}

TEST_CASE("workers: 0 is Q150") {
  auto l = load_validate(four_pairs(kOp + ", workers: 0 }"));
  const auto* d = l.one("Q150");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "workers: 0 is not a thread count (1 .. 1024)");
  CHECK(d->path == "workloads.w.workers");
}

TEST_CASE("workers: 5000 is Q150") {
  auto l = load_validate(four_pairs(kOp + ", workers: 5000 }"));
  const auto* d = l.one("Q150");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "workers: 5000 is not a thread count (1 .. 1024)");
}

TEST_CASE("a negative CPU in pin: is Q151") {
  auto l = load_validate(four_pairs(kOp + ", pin: [0, -1] }"));
  const auto* d = l.one("Q151");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "'-1' is not a CPU number (0 .. 4095)");
  CHECK(d->path == "workloads.w.pin");
}

TEST_CASE("a CPU listed twice in pin: is Q151") {
  auto l = load_validate(four_pairs(kOp + ", pin: [1, 1] }"));
  const auto* d = l.one("Q151");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "CPU 1 is listed twice");
}

TEST_CASE("pin: that is not a list is Q151") {
  auto l = load_validate(four_pairs(kOp + ", pin: 2 }"));
  const auto* d = l.one("Q151");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "pin is a non-empty list of CPU numbers");
}

TEST_CASE("more workers than QPs is one Q152 warning for the group") {
  auto l = load_validate(four_pairs(kOp + ", workers: 8 }"));
  CHECK(l.errors() == 0);
  const auto* d = l.one("Q152");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "workers: 8 on 4 QPs: a worker drives at least one QP, so 4 run");
  CHECK(d->path == "workloads.w.workers");
}

TEST_CASE("a script workload with workers: 2 on 4 QPs has two initiators and two targets, a share each") {
  auto l = load_validate(four_pairs("{ qp: cli, script: builtin:write_bw, local_mr: src, remote_mr: dst.0, "
                                    "workers: 2, pin: [1] }"));
  REQUIRE_MESSAGE(l.errors() == 0, l.dump());
  auto spec = qpo::workload::script_spec(*l.scenario, l.scenario->workloads[0]);
  REQUIRE(spec.workers.size() == 4);
  CHECK(spec.workers[0].name == "cli.0..cli.1");
  CHECK(spec.workers[0].role == "initiator");
  CHECK(spec.workers[0].qps == std::vector<std::string>{"cli.0", "cli.1"});
  CHECK(spec.workers[1].name == "cli.2..cli.3");
  CHECK(spec.workers[2].name == "srv.0..srv.1");
  CHECK(spec.workers[2].role == "target");
  CHECK(spec.workers[3].qps == std::vector<std::string>{"srv.2", "srv.3"});
  for (const auto& w : spec.workers) CHECK(w.cpu == 1);
}

TEST_CASE("a script workload without workers: keeps one worker per QP") {
  auto l = load_validate(four_pairs("{ qp: cli, script: builtin:write_bw, local_mr: src, remote_mr: dst.0 }"));
  REQUIRE_MESSAGE(l.errors() == 0, l.dump());
  auto spec = qpo::workload::script_spec(*l.scenario, l.scenario->workloads[0]);
  CHECK(spec.workers.size() == 8);
  CHECK(spec.workers[0].cpu == -1);
}

TEST_CASE("cpu_list writes ranges") {
  CHECK(qpo::util::cpu_list({0, 1, 2, 3, 6}) == "0-3,6");
  CHECK(qpo::util::cpu_list({1}) == "1");
  CHECK(qpo::util::cpu_list({}) == "");
}

TEST_CASE("pinning to a CPU this process may not use says which it may") {
  auto allowed = qpo::util::allowed_cpus();
  REQUIRE_FALSE(allowed.empty());
  std::string why = qpo::util::pin_this_thread(4000);
  CHECK(why == "CPU 4000 is not available here (this process may run on CPUs " + qpo::util::cpu_list(allowed) + ")");
}

TEST_CASE("pin_of takes the CPUs round robin") {
  CHECK(qpo::util::pin_of({}, 3) == -1);
  CHECK(qpo::util::pin_of({4, 5}, 0) == 4);
  CHECK(qpo::util::pin_of({4, 5}, 3) == 5);
}
