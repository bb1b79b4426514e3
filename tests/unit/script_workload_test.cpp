// Script workloads in the scenario language: `args:` (typed plain values for the script's
// setup), `thresholds:` (limits with units), several initiator QPs, and what `qpo validate`
// finds by running the script's setup() without devices (Q701, Q702, Q703). One behaviour
// per test case.
#include <doctest/doctest.h>

#include "workload/spec.h"
#include "scenario_fixture.h"

using qpo::scenario::ScriptValue;
using qpo::test::col_of;
using qpo::test::line_of;
using qpo::test::load_only;
using qpo::test::load_validate;

namespace {

// The RC pair with one workload appended (its body after "w: ").
std::string with_workload(const std::string& body) {
  return qpo::test::rc_pair(
      "{ path_mtu: auto, dest_qp_num: peer, rq_psn: peer, max_dest_rd_atomic: 1, min_rnr_timer: 12 }",
      "{ path_mtu: auto }", "workloads:\n  w: " + body + "\n");
}

const qpo::scenario::Workload& only_workload(const qpo::test::Loaded& l) {
  REQUIRE(l.scenario);
  REQUIRE(l.scenario->workloads.size() == 1);
  return l.scenario->workloads[0];
}

}  // namespace

TEST_CASE("args keep YAML's types: integers, numbers, booleans, strings, quoted strings and lists") {
  auto l = load_only(with_workload(
      "{ qp: qa, script: 'builtin:write_bw', args: { tx_depth: 64, duration: 1.5, bidirectional: true, "
      "size: 64KiB, label: \"40\", sizes: [64, 4KiB] } }"));
  CHECK_MESSAGE(l.sink.all().empty(), l.dump());
  const auto& w = only_workload(l);
  REQUIRE(w.args.size() == 6);
  CHECK(w.args[0].key == "tx_depth");
  CHECK(w.args[0].value.kind == ScriptValue::Kind::Int);
  CHECK(w.args[0].value.integer == 64);
  CHECK(w.args[1].value.kind == ScriptValue::Kind::Number);
  CHECK(w.args[1].value.number == 1.5);
  CHECK(w.args[2].value.kind == ScriptValue::Kind::Bool);
  CHECK(w.args[2].value.boolean);
  CHECK(w.args[3].value.kind == ScriptValue::Kind::String);
  CHECK(w.args[3].value.text == "64KiB");
  CHECK(w.args[4].value.kind == ScriptValue::Kind::String);  // quoted: stays text
  CHECK(w.args[4].value.text == "40");
  REQUIRE(w.args[5].value.kind == ScriptValue::Kind::List);
  REQUIRE(w.args[5].value.items.size() == 2);
  CHECK(w.args[5].value.items[0].kind == ScriptValue::Kind::Int);
  CHECK(w.args[5].value.items[1].text == "4KiB");
}

TEST_CASE("an arg that is a map is Q102 at the value") {
  std::string y = with_workload("{ qp: qa, script: 'builtin:write_bw', args: { sizes: { a: 1 } } }");
  auto l = load_only(y);
  const auto* d = l.one("Q102");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "expected a number, string, boolean or a list of them, found a map");
  CHECK(d->path == "workloads.w.args.sizes");
  CHECK(d->loc.col == col_of(y, "{ a: 1 }"));
}

TEST_CASE("thresholds convert their units to the summary's: MB/s (2^20 bytes), Mpps, usec, fractions") {
  auto l = load_only(with_workload(
      "{ qp: qa, script: 'builtin:write_bw', thresholds: { min_bw: 1GB/s, min_msg_rate: 200Kpps, "
      "max_p99: 1.5ms, max_typical: 12, max_loss: 2% } }"));
  CHECK_MESSAGE(l.sink.all().empty(), l.dump());
  const auto& w = only_workload(l);
  REQUIRE(w.thresholds.size() == 5);
  CHECK(w.thresholds[0].name == "min_bw");
  CHECK(w.thresholds[0].field == "bw_avg");
  CHECK(w.thresholds[0].minimum);
  CHECK(w.thresholds[0].limit == 1024.0);
  CHECK(w.thresholds[1].field == "msg_rate");
  CHECK(w.thresholds[1].limit == doctest::Approx(0.2));
  CHECK(w.thresholds[2].field == "p99");
  CHECK_FALSE(w.thresholds[2].minimum);
  CHECK(w.thresholds[2].limit == 1500.0);
  CHECK(w.thresholds[3].field == "t_typical");
  CHECK(w.thresholds[3].limit == 12.0);  // a bare number is in the field's unit
  CHECK(w.thresholds[4].field == "loss");
  CHECK(w.thresholds[4].limit == doctest::Approx(0.02));
  CHECK(w.thresholds[4].unit == "%");
}

TEST_CASE("a bare max_loss is a percentage, as a fault's loss is: 1 means 1%, not 100%") {
  auto l = load_only(with_workload("{ qp: qa, script: 'builtin:write_bw', thresholds: { max_loss: 1 } }"));
  CHECK_MESSAGE(l.sink.all().empty(), l.dump());
  REQUIRE(only_workload(l).thresholds.size() == 1);
  CHECK(only_workload(l).thresholds[0].limit == doctest::Approx(0.01));
}

TEST_CASE("a bare max_loss above 100 is Q103") {
  auto l = load_only(with_workload("{ qp: qa, script: 'builtin:write_bw', thresholds: { max_loss: 150 } }"));
  const auto* d = l.one("Q103");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->path == "workloads.w.thresholds.max_loss");
}

TEST_CASE("bandwidth in bits is decimal: 10Gb/s is 1192.09 MB/s") {
  auto l = load_only(with_workload("{ qp: qa, script: 'builtin:write_bw', thresholds: { min_bw: 10Gb/s } }"));
  const auto& w = only_workload(l);
  REQUIRE(w.thresholds.size() == 1);
  CHECK(w.thresholds[0].limit == doctest::Approx(1e10 / 8 / 1048576));
}

TEST_CASE("a limit without a known unit is Q103 with examples") {
  std::string y = with_workload("{ qp: qa, script: 'builtin:write_bw', thresholds: { min_bw: 40 MB } }");
  auto l = load_only(y);
  const auto* d = l.one("Q103");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "'40 MB' is not a bandwidth in MB/s");
  CHECK(d->path == "workloads.w.thresholds.min_bw");
  CHECK(d->hint.find("40MB/s") != std::string::npos);
  CHECK(d->loc.col == col_of(y, "40 MB"));
}

TEST_CASE("an unknown threshold is Q101 with a did-you-mean") {
  auto l = load_only(with_workload("{ qp: qa, script: 'builtin:send_lat', thresholds: { max_p9: 10 } }"));
  const auto* d = l.one("Q101");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "unknown key 'max_p9' in workload thresholds");
  CHECK(d->hint == "did you mean 'max_p99'?");
}

TEST_CASE("args on an op workload are Q703: only scripts take them") {
  std::string y = with_workload("{ qp: qa, op: rdma_write, local_mr: ma, remote_mr: mb, args: { tx_depth: 4 } }");
  auto l = load_only(y);
  const auto* d = l.one("Q703");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "args on a workload without 'script:'");
  CHECK(d->path == "workloads.w.args");
  CHECK(d->loc.line == line_of(y, "tx_depth"));
}

TEST_CASE("size given in the workload and in its args is Q105 pointing at both") {
  std::string y = with_workload("{ qp: qa, script: 'builtin:write_bw', size: 4KiB, args: { size: 8KiB } }");
  auto l = load_only(y);
  const auto* d = l.one("Q105");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "'size' is given twice: in the workload and in its args");
  CHECK(d->loc.col == col_of(y, "size: 8KiB"));
  REQUIRE(d->related.size() == 1);
  CHECK(d->related[0].loc.col == col_of(y, "4KiB, args"));
}

TEST_CASE("qp: as a list makes several initiators; the first one is `qp`") {
  auto l = load_only(with_workload("{ qp: [qa, qb], script: 'builtin:write_bw' }"));
  const auto& w = only_workload(l);
  CHECK(w.qp.name == "qa");
  REQUIRE(w.more_qps.size() == 1);
  CHECK(w.more_qps[0].name == "qb");
  CHECK(w.initiators().size() == 2);
}

TEST_CASE("the script gets size and iterations only when the workload gives them, plus the MR names") {
  auto l = load_validate(with_workload("{ qp: qa, script: 'builtin:write_bw', local_mr: ma, remote_mr: mb, "
                                       "iterations: 300, args: { tx_depth: 16 } }"));
  REQUIRE(l.scenario);
  auto spec = qpo::workload::script_spec(*l.scenario, l.scenario->workloads[0]);
  CHECK(spec.args.find("size") == nullptr);  // the op loop's default 4096 is not the script's
  REQUIRE(spec.args.find("iterations"));
  CHECK(spec.args.find("iterations")->as_int() == 300);
  CHECK(spec.args.find("tx_depth")->as_int() == 16);
  CHECK(spec.args.find("local_mr")->as_string() == "ma");
  CHECK(spec.args.find("remote_mr")->as_string() == "mb");
  REQUIRE(spec.workers.size() == 2);
  CHECK(spec.workers[0].name == "qa");
  CHECK(spec.workers[0].role == "initiator");
  CHECK(spec.workers[1].name == "qb");
  CHECK(spec.workers[1].role == "target");
}

TEST_CASE("a valid script workload validates with no diagnostics") {
  auto l = load_validate(with_workload("{ qp: qa, script: 'builtin:write_bw', local_mr: ma, remote_mr: mb, "
                                       "args: { sizes: [4KiB, 16KiB], cq_mod: 8 }, thresholds: { min_bw: 10MB/s } }"));
  CHECK_MESSAGE(l.sink.all().empty(), l.dump());
}

TEST_CASE("an option the built-in does not know is Q701 at the arg, with a did-you-mean and the options") {
  std::string y = with_workload("{ qp: qa, script: 'builtin:write_bw', args: { tx_deph: 64 } }");
  auto l = load_validate(y);
  const auto* d = l.one("Q701");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "script builtin:write_bw: unknown option 'tx_deph'");
  CHECK(d->path == "workloads.w.args.tx_deph");
  CHECK(d->loc.line == line_of(y, "tx_deph"));
  CHECK(d->loc.col == col_of(y, "tx_deph"));
  CHECK(d->hint.rfind("did you mean 'tx_depth'? options: ", 0) == 0);
}

TEST_CASE("a bad value the script's setup rejects is Q701 at that arg") {
  std::string y = with_workload("{ qp: qa, script: 'builtin:atomic_bw', args: { op: xor } }");
  auto l = load_validate(y);
  const auto* d = l.one("Q701");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "script builtin:atomic_bw: op is \"faa\" or \"cas\"");
  CHECK(d->path == "workloads.w.args.op");
  CHECK(d->loc.col == col_of(y, "op: xor"));
}

TEST_CASE("a value without its unit is Q701 at that arg, without the built-in's own file and line") {
  std::string y = with_workload("{ qp: qa, script: 'builtin:write_bw', local_mr: ma, remote_mr: mb, "
                                "args: { size: 4KiB, rate: 10Gbs } }");
  auto l = load_validate(y);
  const auto* d = l.one("Q701");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message.rfind("script builtin:write_bw: qpo.rate('10Gbs'): not a bandwidth or a message rate", 0) == 0);
  CHECK(d->path == "workloads.w.args.rate");
  CHECK(d->loc.col == col_of(y, "rate: 10Gbs"));
}

TEST_CASE("an unknown built-in is Q701 at script:, with a did-you-mean") {
  std::string y = with_workload("{ qp: qa, script: 'builtin:wrte_bw' }");
  auto l = load_validate(y);
  const auto* d = l.one("Q701");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "script builtin:wrte_bw: no built-in workload 'wrte_bw'");
  CHECK(d->path == "workloads.w.script");
  CHECK(d->loc.col == col_of(y, "'builtin:wrte_bw'"));
  CHECK(d->hint.rfind("did you mean 'write_bw'? built-ins: ", 0) == 0);
}

TEST_CASE("a latency threshold on a bandwidth built-in is Q702 naming what it reports") {
  std::string y = with_workload("{ qp: qa, script: 'builtin:write_bw', thresholds: { max_p99: 12us } }");
  auto l = load_validate(y);
  const auto* d = l.one("Q702");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "max_p99 needs 'p99', which builtin:write_bw does not report");
  CHECK(d->hint == "builtin:write_bw takes min_bw, min_msg_rate");
  CHECK(d->loc.col == col_of(y, "12us"));
}

TEST_CASE("a script workload whose QP has no connect: peer is Q502") {
  std::string y =
      "version: 1\n"
      "devices: { d: {} }\n"
      "cqs: { c: { device: d } }\n"
      "qps:\n"
      "  u: { pd: d, type: UD, send_cq: c, recv_cq: c, states: { INIT: {}, RTR: {}, RTS: {} } }\n"
      "workloads:\n"
      "  w: { qp: u, script: 'builtin:send_bw' }\n";
  auto l = load_validate(y);
  const auto* d = l.one("Q502");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "workload QP 'u' has no 'connect:' peer");
  CHECK(d->loc.line == 7);
}

TEST_CASE("'op' on a script workload is Q703: the script chooses its operations") {
  auto l = load_only(with_workload("{ qp: qa, op: rdma_write, script: 'builtin:write_bw' }"));
  const auto* d = l.one("Q703");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "'op' on a script workload");
  CHECK(d->path == "workloads.w.op");
}

TEST_CASE("'expect' on a script workload is Q703: the run would not judge it") {
  auto l = load_only(with_workload("{ qp: qa, script: 'builtin:write_bw', expect: { status: IBV_WC_REM_ACCESS_ERR } }"));
  const auto* d = l.one("Q703");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "'expect' on a script workload");
  CHECK(d->path == "workloads.w.expect");
}

TEST_CASE("an MR named in a script's args is Q703: MR names are workload keys, checked as references") {
  auto l = load_only(with_workload("{ qp: qa, script: 'builtin:write_bw', args: { remote_mr: mb } }"));
  const auto* d = l.one("Q703");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "'remote_mr' belongs in the workload, not in its args");
  CHECK(d->path == "workloads.w.args.remote_mr");
}
