// When a script workload of a timeline stage runs is the plan's (plan/script_turn.h): beside
// the stage's op workloads unless they share a QP or an SRQ, through the run's CQ router when
// they share a CQ, and the same on every host.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "plan/script_turn.h"
#include "unit/plan_fixture.h"

namespace {

using qpo::plan::ScriptTurn;
using qpo::plan::StepKind;
using qpo::test::plan_of;
using qpo::test::steps_of;

// qa -> qb driven by a script (`watch`), qc -> qd by an op workload (`write`), in one stage;
// `qps` and `more` fill in what the QPs complete on and what else is declared; `third`: a
// second script, on qb.
std::string two_workloads(const std::string& qps, const std::string& more = "", const std::string& third = "") {
  return "version: 1\nname: beside\n"
         "devices: { d: { name: auto, port: 1 } }\n"
         "mrs:\n"
         "  ma: { pd: d, size: 4KiB, access: [local_write] }\n"
         "  mb: { pd: d, size: 4KiB, access: [local_write, remote_write] }\n"
         "  mc: { pd: d, size: 4KiB, access: [local_write] }\n"
         "  md: { pd: d, size: 4KiB, access: [local_write, remote_write] }\n"
         "cqs: { c: { device: d, depth: 1024 }, cs: { device: d, depth: 1024 } }\n" +
         more + "qps:\n" + qps +
         "workloads:\n"
         "  watch: { qp: qa, script: 'builtin:write_bw', local_mr: ma, remote_mr: mb }\n"
         "  write: { qp: qc, op: send, local_mr: mc, size: 64, iterations: 10 }\n" +
         (third.empty() ? "" : "  " + third + ": { qp: qb, script: 'builtin:write_bw', local_mr: mb, remote_mr: ma }\n") +
         "timeline:\n"
         "  - workloads: [watch, write" + (third.empty() ? "" : ", " + third) + "]\n";
}

std::string qp(const std::string& name, const std::string& peer, const std::string& cq, const std::string& srq = "") {
  return "  " + name + ": { pd: d, type: RC, send_cq: " + cq + ", recv_cq: " + cq + (srq.empty() ? "" : ", srq: " + srq) +
         ", connect: " + peer + ", states: { INIT: { qp_access_flags: [remote_write] }, RTR: {}, RTS: {} } }\n";
}

// The turn of script `name`'s workload step, and the plan's words for it ("" when beside).
std::pair<ScriptTurn, std::string> turn_of(const qpo::plan::Plan& p, const std::string& name = "watch") {
  for (const auto* step : steps_of(p, StepKind::Workload)) {
    if (step->object != name) continue;
    std::string runs;
    for (const auto& a : step->args)
      if (a.name == "runs") runs = a.value;
    return {step->extra().script_turn, runs};
  }
  FAIL("no workload step " << name);
  return {};
}

}  // namespace

TEST_CASE("a script and an op workload on CQs of their own run side by side, the script on a router of its own") {
  auto p = plan_of(two_workloads(qp("qa", "qb", "cs") + qp("qb", "qa", "cs") + qp("qc", "qd", "c") + qp("qd", "qc", "c")));
  CHECK(turn_of(p) == std::pair<ScriptTurn, std::string>{ScriptTurn::Beside, ""});
}

TEST_CASE("a script and an op workload whose QPs complete on one CQ run side by side, the script on the run's router") {
  auto p = plan_of(two_workloads(qp("qa", "qb", "c") + qp("qb", "qa", "c") + qp("qc", "qd", "c") + qp("qd", "qc", "c")));
  CHECK(turn_of(p) == std::pair<ScriptTurn, std::string>{
                          ScriptTurn::BesideSharedCq, "with the stage's op workloads; their CQ read through the run's router"});
}

TEST_CASE("a script whose target shares an SRQ with the op workload's receiver runs first, alone, and the plan says so") {
  auto p = plan_of(two_workloads(qp("qa", "qb", "cs") + qp("qb", "qa", "cs", "s") + qp("qc", "qd", "c") +
                                     qp("qd", "qc", "c", "s"),
                                 "srqs: { s: { pd: d, max_wr: 64 } }\n"));
  CHECK(turn_of(p) == std::pair<ScriptTurn, std::string>{
                          ScriptTurn::AloneFirst, "first, alone: it shares a QP or an SRQ with a workload of the stage"});
}

TEST_CASE("a second script on a QP of a script beside the op workloads runs first, alone") {
  auto p = plan_of(two_workloads(qp("qa", "qb", "cs") + qp("qb", "qa", "cs") + qp("qc", "qd", "c") + qp("qd", "qc", "c"),
                                 "", "back"));
  CHECK(turn_of(p, "watch").first == ScriptTurn::Beside);
  CHECK(turn_of(p, "back").first == ScriptTurn::AloneFirst);  // qb and qa are watch's: their routes would clash
}
