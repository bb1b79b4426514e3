// `qpo plan` on a script workload (issue 31): its step shows the args the script receives
// (`args:`, and the workload's own size/iterations), not the op loop's defaults.
#include <doctest/doctest.h>

#include <string>

#include "plan/plan.h"
#include "plan_fixture.h"
#include "scenario_fixture.h"
#include "util/json_writer.h"

using qpo::plan::Plan;

namespace {

// The RC pair with one write_bw script workload on qa; `keys` adds to its keys (", args: ...").
Plan write_bw_plan(const std::string& keys) {
  return qpo::test::plan_of(qpo::test::rc_pair(
      "{ path_mtu: auto, dest_qp_num: peer, rq_psn: peer, max_dest_rd_atomic: 1, "
      "ah_attr: { is_global: true, grh: { dgid: peer, sgid_index: auto, hop_limit: 1 } } }",
      "{ path_mtu: auto }",
      "workloads:\n  bw: { qp: qa, script: \"builtin:write_bw\", local_mr: ma, remote_mr: mb" + keys + " }\n"));
}

// The workload step's args as "name=value", in order.
std::string workload_args(const Plan& p) {
  const auto* st = qpo::test::first_step(p, qpo::plan::StepKind::Workload);
  REQUIRE(st);
  std::string out;
  for (const auto& a : st->args) out += (out.empty() ? "" : " ") + a.name + "=" + a.value;
  return out;
}

}  // namespace

TEST_CASE("a script workload's plan step shows its args: size and iterations from args:, no op-loop defaults") {
  Plan p = write_bw_plan(", args: { size: 64, iterations: 5, tx_depth: 16 }");
  CHECK(workload_args(p) == "qp=qa local_mr=ma remote_mr=mb remote addr/rkey=peer iterations=5 size=64 tx_depth=16 "
                            "script=builtin:write_bw workers=one per QP");
  CHECK(qpo::plan::render_text(p).find("          size=64\n") != std::string::npos);
  qpo::util::JsonWriter w;
  qpo::plan::render_json(w, p);
  CHECK(w.str().find("\"name\": \"size\",\n              \"value\": \"64\"") != std::string::npos);
}

TEST_CASE("a script workload's own size: and iterations: keys reach its plan step as the script gets them") {
  CHECK(workload_args(write_bw_plan(", size: 64KiB, iterations: 300, args: { duration: 2 }")) ==
        "qp=qa local_mr=ma remote_mr=mb remote addr/rkey=peer duration=2 iterations=300 size=65536 "
        "script=builtin:write_bw workers=one per QP");
}

TEST_CASE("a script workload without size or iterations shows none: the script's own defaults apply") {
  CHECK(workload_args(write_bw_plan("")) ==
        "qp=qa local_mr=ma remote_mr=mb remote addr/rkey=peer script=builtin:write_bw workers=one per QP");
}
