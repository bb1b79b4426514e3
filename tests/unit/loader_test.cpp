// The loader: YAML text -> Scenario, every structural problem a diagnostic with code,
// file:line:col, YAML path and hint. One behaviour per test case.
#include <doctest/doctest.h>

#include "scenario/keys.h"
#include "scenario_fixture.h"
#include "util/strings.h"

using qpo::diag::Severity;
using qpo::spec::QpState;
using qpo::test::col_of;
using qpo::test::line_of;
using qpo::test::load_only;

TEST_CASE("the RC pair fixture loads with no diagnostics") {
  auto l = load_only(qpo::test::rc_pair());
  REQUIRE(l.scenario);
  CHECK_MESSAGE(l.sink.all().empty(), l.dump());
  CHECK(l.scenario->qps.size() == 2);
  CHECK(l.scenario->name == "rc-pair");
  CHECK(l.scenario->file == "t.yaml");
}

TEST_CASE("an unknown key in a QP is Q101 at the key, with a did-you-mean hint") {
  std::string y =
      "version: 1\n"
      "devices: { d: {} }\n"
      "cqs: { c: { device: d } }\n"
      "qps:\n"
      "  q:\n"
      "    pd: d\n"
      "    type: RC\n"
      "    sendcq: c\n";
  auto l = load_only(y);
  const auto* d = l.one("Q101");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->severity == Severity::Error);
  CHECK(d->message == "unknown key 'sendcq' in a queue pair");
  CHECK(d->hint == "did you mean 'send_cq'?");
  CHECK(d->path == "qps.q.sendcq");
  CHECK(d->loc.file == "t.yaml");
  CHECK(d->loc.line == 8);
  CHECK(d->loc.col == 5);
}

TEST_CASE("an unknown top-level key without a close match lists the allowed keys") {
  auto l = load_only("version: 1\nzzzzzzzz: 3\n");
  const auto* d = l.one("Q101");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "unknown key 'zzzzzzzz' in the scenario");
  CHECK(d->hint == "allowed keys: " + qpo::util::join(qpo::scenario::keys::top_level(), ", "));
  CHECK(d->hint.rfind("allowed keys: version, name, description, tags, requires, hosts, devices, pds, mrs, cqs, ", 0) == 0);
  CHECK(d->loc.line == 2);
  CHECK(d->loc.col == 1);
}

TEST_CASE("a misspelt ibv_qp_attr field in a state is Q101 with a did-you-mean hint") {
  std::string y = qpo::test::rc_pair("{ path_mtu: auto, min_rnr_timr: 12 }");
  auto l = load_only(y);
  const auto* d = l.one("Q101");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "unknown ibv_qp_attr field 'min_rnr_timr'");
  CHECK(d->hint == "did you mean 'min_rnr_timer'?");
  CHECK(d->path == "qps.qa.states.RTR.min_rnr_timr");
  CHECK(d->loc.line == line_of(y, "min_rnr_timr"));
  CHECK(d->loc.col == col_of(y, "min_rnr_timr"));
}

TEST_CASE("a mask name used as a field name is Q101 pointing to the struct field") {
  auto l = load_only(qpo::test::rc_pair("{ path_mtu: auto, IBV_QP_MIN_RNR_TIMER: 12 }"));
  const auto* d = l.one("Q101");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->hint == "write the struct field name 'min_rnr_timer' (the mask bit IBV_QP_MIN_RNR_TIMER is derived from it)");
}

TEST_CASE("qp_state inside a state body is Q101: the entry's key is the state") {
  auto l = load_only(qpo::test::rc_pair("{ qp_state: RTR }"));
  const auto* d = l.one("Q101");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "qp_state is set by the transition itself");
  CHECK(d->hint == "the key of this entry under states: is the target state");
}

TEST_CASE("a list where a number belongs is Q102 wrong type at the value") {
  std::string y = "version: 1\ndevices: { d: {} }\ncqs:\n  c: { device: d, depth: [1, 2] }\n";
  auto l = load_only(y);
  const auto* d = l.one("Q102");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "expected a non-negative integer, found a list");
  CHECK(d->path == "cqs.c.depth");
  CHECK(d->loc.line == 4);
  CHECK(d->loc.col == col_of(y, "[1, 2]"));
  CHECK(d->rule == "scenario schema: value type");
  REQUIRE(l.scenario);
  CHECK(l.scenario->cqs.at(0).depth == 256);  // the default survives
}

TEST_CASE("a word where a number belongs is Q103 not an integer") {
  auto l = load_only("version: 1\ndevices: { d: {} }\ncqs:\n  c: { device: d, depth: lots }\n");
  const auto* d = l.one("Q103");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "'lots' is not a non-negative integer");
  CHECK(d->path == "cqs.c.depth");
}

TEST_CASE("a scenario that is not a map is Q102 and loads as an empty scenario") {
  auto l = load_only("- just\n- a list\n");
  const auto* d = l.one("Q102");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "a scenario must be a YAML map, found a list");
  CHECK(l.scenario.has_value());
}

TEST_CASE("text that is not YAML is Q100 with a position, and no scenario") {
  auto l = load_only("version: 1\nqps: { a: [1, 2 }\n");
  const auto* d = l.one("Q100");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message.rfind("not valid YAML: ", 0) == 0);
  CHECK(d->loc.line == 2);
  CHECK(d->loc.col > 0);
  CHECK_FALSE(l.scenario.has_value());
}

TEST_CASE("a missing version is Q104") {
  auto l = load_only("name: x\n");
  const auto* d = l.one("Q104");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "missing required key 'version'");
  CHECK(d->hint == "add 'version: 1' at the top");
}

TEST_CASE("an unsupported version is Q107") {
  auto l = load_only("version: 2\n");
  const auto* d = l.one("Q107");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "unsupported scenario version 2");
  CHECK(d->loc.line == 1);
  CHECK(d->loc.col == 10);
}

TEST_CASE("sizes with binary units: 64KiB is 65536 bytes") {
  auto l = load_only(
      "version: 1\ndevices: { d: {} }\n"
      "mrs:\n  a: { pd: d, size: 64KiB }\n  b: { pd: d, size: 1MiB }\n  c: { pd: d, size: 0x1000 }\n"
      "  e: { pd: d, size: 2KB }\n  f: { pd: d, size: 8B }\n");
  REQUIRE(l.scenario);
  // No QPs: the one finding is the nothing-to-do warning.
  CHECK_MESSAGE((l.sink.all().size() == 1 && l.one("Q113")), l.dump());
  CHECK(l.scenario->mr("a")->size == 65536);
  CHECK(l.scenario->mr("b")->size == 1048576);
  CHECK(l.scenario->mr("c")->size == 4096);
  CHECK(l.scenario->mr("e")->size == 2000);
  CHECK(l.scenario->mr("f")->size == 8);
}

TEST_CASE("an ambiguous size unit '64K' is Q103 with a hint naming KiB and KB") {
  std::string y = "version: 1\ndevices: { d: {} }\nmrs:\n  a: { pd: d, size: 64K }\n";
  auto l = load_only(y);
  const auto* d = l.one("Q103");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "unknown size unit 'K'");
  CHECK(d->hint == "write 64KiB (powers of 1024) or 64KB (powers of 1000)");
  CHECK(d->path == "mrs.a.size");
  CHECK(d->loc.line == 4);
  CHECK(d->loc.col == col_of(y, "64K"));
}

TEST_CASE("a duplicate key is Q105 at the second one, related to the first") {
  std::string y = "version: 1\ndevices: { d: {} }\nmrs:\n  a:\n    pd: d\n    size: 4096\n    size: 8192\n";
  auto l = load_only(y);
  const auto* d = l.one("Q105");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "duplicate key 'size'");
  CHECK(d->path == "mrs.a.size");
  CHECK(d->loc.line == 7);
  CHECK(d->loc.col == 5);
  REQUIRE(d->related.size() == 1);
  CHECK(d->related[0].loc.line == 6);
  CHECK(d->related[0].loc.col == 5);
  CHECK(d->related[0].label == "first defined here");
  CHECK(l.scenario->mr("a")->size == 4096);  // the first one is kept, not silently replaced
}

TEST_CASE("a duplicate attribute in a transition body is Q105 related to the first") {
  std::string y = qpo::test::rc_pair("{ path_mtu: auto, path_mtu: 1024 }");
  auto l = load_only(y);
  const auto* d = l.one("Q105");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "duplicate key 'path_mtu'");
  CHECK(d->path == "qps.qa.states.RTR.path_mtu");
  REQUIRE(d->related.size() == 1);
  CHECK(d->related[0].loc.line == d->loc.line);
  CHECK(d->related[0].loc.col == col_of(y, "path_mtu"));
}

TEST_CASE("a duplicate QP name is Q105 related to the first definition") {
  std::string y = "version: 1\nqps:\n  q: { pd: d, type: RC }\n  q: { pd: d, type: UD }\n";
  auto l = load_only(y);
  auto qs = l.with_code("Q105");
  REQUIRE_MESSAGE(qs.size() == 1, l.dump());
  CHECK(qs[0]->loc.line == 4);
  REQUIRE(qs[0]->related.size() == 1);
  CHECK(qs[0]->related[0].loc.line == 3);
}

TEST_CASE("an unknown QP type is Q106 with a did-you-mean hint") {
  std::string y = "version: 1\nqps:\n  q: { pd: d, type: RCC }\n";
  auto l = load_only(y);
  const auto* d = l.one("Q106");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "unknown QP type 'RCC'");
  CHECK(d->hint == "did you mean 'RC'?");
  CHECK(d->path == "qps.q.type");
  CHECK(d->loc.col == col_of(y, "RCC"));
}

TEST_CASE("an unknown access flag is Q106 with a did-you-mean hint") {
  auto l = load_only("version: 1\ndevices: { d: {} }\nmrs:\n  a: { pd: d, access: [local_write, remote_wrte] }\n");
  const auto* d = l.one("Q106");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "unknown access flag 'remote_wrte'");
  CHECK(d->hint == "did you mean 'remote_write'?");
}

TEST_CASE("access flags parse from a list, an a|b string, and with the IBV_ACCESS_ prefix") {
  auto l = load_only(
      "version: 1\ndevices: { d: {} }\nmrs:\n"
      "  a: { pd: d, access: [local_write, remote_write] }\n"
      "  b: { pd: d, access: 'IBV_ACCESS_LOCAL_WRITE | remote_write' }\n"
      "  c: { pd: d, access: 3 }\n");
  // No QPs: the one finding is the nothing-to-do warning.
  CHECK_MESSAGE((l.sink.all().size() == 1 && l.one("Q113")), l.dump());
  CHECK(l.scenario->mr("a")->access == 0x3);
  CHECK(l.scenario->mr("b")->access == 0x3);
  CHECK(l.scenario->mr("c")->access == 0x3);
}

TEST_CASE("a symbolic value a field cannot resolve is Q106") {
  auto l = load_only(qpo::test::rc_pair("{ path_mtu: auto, min_rnr_timer: peer }"));
  const auto* d = l.one("Q106");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "min_rnr_timer cannot be 'peer'");
  CHECK(d->hint == "give a number");
}

TEST_CASE("path_mtu accepts IBV_MTU_1024, MTU_1024 and 1024 for the same enum value") {
  for (const char* spelling : {"IBV_MTU_1024", "MTU_1024", "1024", "3"}) {
    CAPTURE(spelling);
    auto l = load_only(qpo::test::rc_pair(std::string("{ path_mtu: ") + spelling + " }"));
    CHECK_MESSAGE(l.sink.all().empty(), l.dump());
    const auto* t = l.transition("qa", QpState::RTR);
    REQUIRE(t);
    REQUIRE(t->attr("path_mtu"));
    CHECK(t->attr("path_mtu")->number == 3);
  }
}

TEST_CASE("an unknown state under states: is Q106") {
  auto l = load_only("version: 1\nqps:\n  q:\n    pd: d\n    type: RC\n    states:\n      RTX: {}\n");
  const auto* d = l.one("Q106");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "unknown QP state 'RTX'");
  CHECK(d->loc.line == 7);
  CHECK(d->loc.col == 7);
}

TEST_CASE("bring-up states come before transitions: whatever the key order") {
  auto l = load_only(
      "version: 1\nqps:\n  q:\n    pd: d\n    type: UD\n"
      "    transitions: [ERR, {to: RESET}]\n"
      "    states: { INIT: {}, RTR: {}, RTS: {} }\n");
  REQUIRE(l.qp("q"));
  const auto& tr = l.qp("q")->transitions;
  REQUIRE(tr.size() == 5);
  CHECK(tr[0].to == QpState::INIT);
  CHECK(tr[2].to == QpState::RTS);
  CHECK(tr[3].to == QpState::ERR);
  CHECK_FALSE(tr[3].bring_up);
  CHECK(tr[4].to == QpState::RESET);
  CHECK(tr[4].path == "qps.q.transitions[1]");
}

TEST_CASE("an unknown errno in expect is Q106 with a did-you-mean hint") {
  auto l = load_only(qpo::test::rc_pair("{ path_mtu: auto, expect: EINVL }"));
  const auto* d = l.one("Q106");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "unknown errno 'EINVL'");
  CHECK(d->hint == "did you mean 'EINVAL'?");
}

TEST_CASE("a bad object name is Q108") {
  auto l = load_only("version: 1\ndevices: { 'bad name!': {} }\n");
  const auto* d = l.one("Q108");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "bad object name 'bad name!'");
}

TEST_CASE("a device-named pd gets an implicit PD, and a single host is the default host") {
  auto l = load_only("version: 1\ndevices: { d: {} }\nmrs:\n  a: { pd: d }\n");
  REQUIRE(l.scenario);
  // No QPs: the one finding is the nothing-to-do warning.
  CHECK_MESSAGE((l.sink.all().size() == 1 && l.one("Q113")), l.dump());
  REQUIRE(l.scenario->pd("d"));
  CHECK(l.scenario->pd("d")->implicit);
  REQUIRE(l.scenario->hosts.size() == 1);
  CHECK(l.scenario->hosts[0].name == "local");
  CHECK(l.scenario->device("d")->host.name == "local");
}

TEST_CASE("a QP written as a scalar is Q102 wrong type, not an exception") {
  qpo::test::Loaded l("version: 1\nqps:\n  q: 5\n");
  std::string thrown;
  try {
    l.scenario = qpo::scenario::load_scenario(l.source, l.sink);
  } catch (const std::exception& e) {
    thrown = e.what();
  }
  CHECK_MESSAGE(thrown.empty(), "load_scenario threw: " << thrown);
  const auto* d = l.one("Q102");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "expected a queue pair, found '5'");
  CHECK(d->path == "qps.q");
  CHECK(d->loc.line == 3);
  CHECK(d->loc.col == 6);
}

TEST_CASE("gid_index takes the IP address of a GID, IPv4 or IPv6, resolved at run time") {
  for (const char* ip : {"192.0.2.1", "2001:db8::1"}) {
    CAPTURE(ip);
    auto l = load_only(std::string("version: 1\ndevices: { d: { gid_index: '") + ip + "' } }\n");
    REQUIRE_MESSAGE(l.scenario, l.dump());
    CHECK_MESSAGE(l.errors() == 0, l.dump());
    CHECK(l.scenario->devices.at(0).gid_ip == ip);
    CHECK(l.scenario->devices.at(0).gid_symbol == qpo::scenario::Symbol::None);
  }
}

TEST_CASE("a gid_index that is neither auto, a number nor an IP address is an error at the value") {
  auto l = load_only("version: 1\ndevices: { d: { gid_index: 1.2.3 } }\n");
  REQUIRE(l.errors() == 1);
  CHECK(l.sink.all().at(0).path == "devices.d.gid_index");
}
