// A script workload runs beside the op workloads of its timeline stage unless they share a QP
// or an SRQ (exec/lua_workload.h runs_beside): every reader polls a CQ through the run's
// router, so a shared CQ keeps them apart no more.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "exec/lua_workload.h"
#include "unit/plan_fixture.h"

namespace {

using qpo::plan::StepKind;
using qpo::test::plan_of;
using qpo::test::steps_of;

// qa -> qb driven by a script (`watch`), qc -> qd by an op workload (`write`), in one stage;
// `qps` and `more` fill in what the QPs complete on and what else is declared.
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

const qpo::plan::Step* workload_step(const std::vector<const qpo::plan::Step*>& stage, const qpo::plan::Plan& p,
                                     const std::string& name) {
  for (const auto* step : stage)
    if (p.workload_of(*step).spec.name == name) return step;
  FAIL("no workload step " << name);
  return nullptr;
}

bool script_runs_beside(const qpo::plan::Plan& p, const std::string& name = "watch") {
  auto stage = steps_of(p, StepKind::Workload);
  return qpo::exec::runs_beside(p, *workload_step(stage, p, name), stage);
}

bool script_shares_cq(const qpo::plan::Plan& p) {
  auto stage = steps_of(p, StepKind::Workload);
  return qpo::exec::shares_cq_beside(p, *workload_step(stage, p, "watch"), stage);
}

}  // namespace

TEST_CASE("a script and an op workload on CQs of their own run side by side") {
  auto p = plan_of(two_workloads(qp("qa", "qb", "cs") + qp("qb", "qa", "cs") + qp("qc", "qd", "c") + qp("qd", "qc", "c")));
  CHECK(script_runs_beside(p));
  CHECK_FALSE(script_shares_cq(p));  // nobody else polls its CQ: a router of its own
}

TEST_CASE("a script and an op workload whose QPs complete on one CQ run side by side, the script on the run's router") {
  auto p = plan_of(two_workloads(qp("qa", "qb", "c") + qp("qb", "qa", "c") + qp("qc", "qd", "c") + qp("qd", "qc", "c")));
  CHECK(script_runs_beside(p));
  CHECK(script_shares_cq(p));
}

TEST_CASE("a second script on a QP of a script beside the op workloads runs first, alone") {
  auto p = plan_of(two_workloads(qp("qa", "qb", "cs") + qp("qb", "qa", "cs") + qp("qc", "qd", "c") + qp("qd", "qc", "c"),
                                 "", "back"));
  CHECK(script_runs_beside(p, "watch"));
  CHECK_FALSE(script_runs_beside(p, "back"));  // qb and qa are watch's: their routes would clash
}

TEST_CASE("a script whose target shares an SRQ with the op workload's receiver runs first, alone") {
  auto p = plan_of(two_workloads(qp("qa", "qb", "cs") + qp("qb", "qa", "cs", "s") + qp("qc", "qd", "c") +
                                     qp("qd", "qc", "c", "s"),
                                 "srqs: { s: { pd: d, max_wr: 64 } }\n"));
  CHECK_FALSE(script_runs_beside(p));
}
