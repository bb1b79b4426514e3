// What code compares in the loaded model is typed, set once by the loader: a workload's op is
// a util::Op (never parsed again, never defaulted), a QP's type a spec::QpType (issue 31 item 1).
#include <doctest/doctest.h>

#include "scenario_fixture.h"
#include "util/ops.h"

using qpo::spec::QpType;
using qpo::test::load_only;
using qpo::util::Op;

namespace {

constexpr const char* kQps =
    "version: 1\n"
    "devices: { d: {} }\n"
    "pds: { p: { device: d } }\n"
    "cqs: { c: { device: d } }\n"
    "qps:\n"
    "  rc: { pd: p, type: RC, send_cq: c, recv_cq: c, connect: rc2 }\n"
    "  rc2: { pd: p, type: rc, send_cq: c, recv_cq: c, connect: rc }\n"
    "  ud: { pd: p, type: UD, send_cq: c, recv_cq: c }\n";

}  // namespace

TEST_CASE("a workload loaded from YAML carries its op as the enum: rdma_write is Op::Write, a script has none") {
  auto l = load_only(std::string(kQps) +
                     "workloads:\n"
                     "  w: { qp: rc, op: rdma_write }\n"
                     "  f: { qp: rc, op: atomic_fetch_add }\n"
                     "  s: { qp: rc, script: 'builtin:write_lat' }\n");
  REQUIRE(l.scenario);
  REQUIRE(l.scenario->workload("w"));
  CHECK(l.scenario->workload("w")->op == Op::Write);
  CHECK(l.scenario->workload("f")->op == Op::FetchAdd);
  CHECK_FALSE(l.scenario->workload("s")->op.has_value());
  CHECK(l.scenario->workload("s")->builtin_op() == nullptr);
  REQUIRE(l.scenario->workload("w")->builtin_op() != nullptr);
  CHECK(l.scenario->workload("w")->builtin_op()->op == Op::Write);
}

TEST_CASE("an RC and a UD QP loaded from YAML carry spec::QpType, whatever the case the file wrote") {
  auto l = load_only(kQps);
  REQUIRE(l.scenario);
  CHECK(l.errors() == 0);
  CHECK(l.scenario->qp("rc")->qp_type == QpType::RC);
  CHECK(l.scenario->qp("rc2")->qp_type == QpType::RC);
  CHECK(l.scenario->qp("rc2")->type_name == "RC");  // the table's spelling, for messages
  CHECK(l.scenario->qp("ud")->qp_type == QpType::UD);
}
