// How many receives bring-up posts: all of max_recv_wr, except on a QP whose receives only
// scripts use (the data path keeps its own there): then just the smoke's, one per sender. The plan
// shows the same count the executor posts.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include "plan/plan.h"
#include "scenario/script_qps.h"
#include "scenario_fixture.h"

using qpo::test::load_validate;

namespace {

std::string pair_with(const std::string& workloads) {
  return qpo::test::rc_pair(
      "{ path_mtu: auto, dest_qp_num: peer, rq_psn: peer, max_dest_rd_atomic: 1, min_rnr_timer: 12 }",
      "{ path_mtu: auto }", "workloads:\n" + workloads);
}

}  // namespace

TEST_CASE("a QP only a script uses gets one receive at bring-up, both ends of the pair") {
  auto l = load_validate(pair_with("  w: { qp: qa, script: 'builtin:send_bw', local_mr: ma, remote_mr: mb }\n"));
  REQUIRE_MESSAGE(l.errors() == 0, l.dump());
  CHECK(qpo::scenario::BringupReceives(*l.scenario).scripts_own("qa"));
  CHECK(qpo::scenario::BringupReceives(*l.scenario).scripts_own("qb"));
  CHECK(qpo::scenario::BringupReceives(*l.scenario).of_qp(*l.qp("qa")) == 1);
  CHECK(qpo::scenario::BringupReceives(*l.scenario).of_qp(*l.qp("qb")) == 1);
}

TEST_CASE("an op workload on the pair keeps every receive the executor posts") {
  auto l = load_validate(pair_with("  w: { qp: qa, script: 'builtin:send_bw', local_mr: ma, remote_mr: mb }\n"
                                   "  s: { qp: qa, op: send, local_mr: ma, size: 64, iterations: 10 }\n"));
  REQUIRE_MESSAGE(l.errors() == 0, l.dump());
  CHECK_FALSE(qpo::scenario::BringupReceives(*l.scenario).scripts_own("qb"));
  CHECK(qpo::scenario::BringupReceives(*l.scenario).of_qp(*l.qp("qb")) == 128);  // the fixture's max_recv_wr default
}

TEST_CASE("without any script workload nothing changes") {
  auto l = load_validate(pair_with("  s: { qp: qa, op: rdma_write, local_mr: ma, remote_mr: mb }\n"));
  REQUIRE_MESSAGE(l.errors() == 0, l.dump());
  CHECK(qpo::scenario::BringupReceives(*l.scenario).of_qp(*l.qp("qa")) == 128);
}

TEST_CASE("the plan shows the reduced count for a QP whose receives a script owns") {
  auto l = load_validate(pair_with("  w: { qp: qa, script: 'builtin:send_bw', local_mr: ma, remote_mr: mb }\n"));
  REQUIRE_MESSAGE(l.errors() == 0, l.dump());
  auto p = qpo::plan::build_plan(*l.checked);
  int seen = 0;
  for (const auto& h : p.hosts)
    for (const auto& st : h.steps)
      if (st.verb == "ibv_post_recv") {
        ++seen;
        REQUIRE(!st.args.empty());
        CHECK(st.args[0].name == "wr_count");
        CHECK(st.args[0].value == "1");
      }
  CHECK(seen == 2);
}

TEST_CASE("a script-owned UD receiver with several senders gets one receive per sender (a fan-in across hosts)") {
  std::ifstream in(std::string(QPO_SOURCE_DIR) + "/scenarios/two-host-ud-incast-lua.yaml");
  std::stringstream text;
  text << in.rdbuf();
  auto l = load_validate(text.str());
  REQUIRE_MESSAGE(l.errors() == 0, l.dump());
  CHECK(qpo::scenario::BringupReceives(*l.scenario).of_qp(*l.qp("rx")) == 3);
  CHECK(qpo::scenario::BringupReceives(*l.scenario).of_qp(*l.qp("s1")) == 1);
}
