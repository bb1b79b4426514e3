// `--set PATH=VALUE` (scenario/overrides.h): each rule, one behaviour per test, through the
// loader and the validator as `qpo validate --set` runs them.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "report/run_report.h"
#include "scenario/overrides.h"
#include "scenario/yaml_parse.h"
#include "scenario_fixture.h"
#include "util/json_writer.h"
#include "workload/spec.h"

using qpo::test::Loaded;
using qpo::test::rc_pair;

namespace {

Loaded load_with(std::string yaml, std::vector<std::string> sets) {
  Loaded l(std::move(yaml));
  l.scenario = qpo::scenario::load_scenario(l.source, l.sink, sets);
  if (l.scenario) l.checked = qpo::validate::validate(*l.scenario, l.sink);
  return l;
}

const qpo::scenario::Attr* rtr_attr(const Loaded& l, const char* qp, const char* field) {
  const auto* t = l.transition(qp, qpo::spec::QpState::RTR);
  return t ? t->attr(field) : nullptr;
}

const std::string kTimeline = "timeline:\n  - smoke\n  - pause: 100ms\n";

}  // namespace

TEST_CASE("--set replaces a value the file writes") {
  auto l = load_with(rc_pair(), {"qps.qa.states.RTR.path_mtu=1024"});
  REQUIRE_MESSAGE(l.errors() == 0, l.dump());
  const auto* a = rtr_attr(l, "qa", "path_mtu");
  REQUIRE(a);
  CHECK(a->text == "1024");
}

TEST_CASE("--set with a bad value gets the file's diagnostic, located at the flag") {
  auto l = load_with(rc_pair(), {"qps.qa.states.RTR.path_mtu=999"});
  const auto* d = l.one("Q401");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->loc.file == "--set qps.qa.states.RTR.path_mtu=999");
  CHECK(d->loc.line == 0);
  CHECK(d->path == "qps.qa.states.RTR.path_mtu");
  CHECK(d->message == "path_mtu = 999 is outside 1..5");
}

TEST_CASE("--set adds a key the file does not write") {
  auto l = load_with(rc_pair(), {"qps.qb.states.RTR.min_rnr_timer=5"});
  REQUIRE_MESSAGE(l.errors() == 0, l.dump());
  const auto* a = rtr_attr(l, "qb", "min_rnr_timer");
  REQUIRE(a);
  CHECK(a->number == 5);
  CHECK_FALSE(a->from_default);
}

TEST_CASE("--set creates the maps on its path below an existing object") {
  auto l = load_with(rc_pair(), {"qps.qb.cap.max_send_wr=16"});
  REQUIRE_MESSAGE(l.errors() == 0, l.dump());
  CHECK(l.qp("qb")->cap.max_send_wr == 16);
}

TEST_CASE("--set through a missing object is Q114 naming the known names") {
  auto l = load_with(rc_pair(), {"qps.qz.type=RC"});
  const auto* d = l.one("Q114");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->loc.file == "--set qps.qz.type=RC");
  CHECK(d->path == "qps.qz.type");
  CHECK(d->message == "'qz' is not defined in qps:");
  CHECK(d->hint == "did you mean 'qa'? known: qa, qb");
  CHECK(l.errors() == 1);
}

TEST_CASE("--set into a section the file does not have is Q114") {
  auto l = load_with(rc_pair(), {"workloads.bw.size=4KiB"});
  const auto* d = l.one("Q114");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "'bw' is not defined in workloads: the scenario has no workloads entries");
}

TEST_CASE("--set below a scalar is Q114") {
  auto l = load_with(rc_pair(), {"qps.qa.type.x=1"});
  const auto* d = l.one("Q114");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "qps.qa.type is 'RC', not a map: there is no 'x' under it to set");
}

TEST_CASE("--set without '=' is Q114") {
  auto l = load_with(rc_pair(), {"qps.qa.type"});
  const auto* d = l.one("Q114");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "--set takes PATH=VALUE; 'qps.qa.type' has no '='");
}

TEST_CASE("--set with an empty key in its path is Q114") {
  auto l = load_with(rc_pair(), {"qps..type=RC"});
  const auto* d = l.one("Q114");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "--set path 'qps..type' has an empty key");
}

TEST_CASE("--set with nothing after '=' is Q114") {
  auto l = load_with(rc_pair(), {"qps.qa.type="});
  const auto* d = l.one("Q114");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "--set qps.qa.type= has no value after '='");
}

TEST_CASE("--set with a value that is not YAML is Q114") {
  auto l = load_with(rc_pair(), {"qps.qa.states.INIT.qp_access_flags=[remote_write"});
  const auto* d = l.one("Q114");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message.rfind("the value is not YAML: ", 0) == 0);
}

TEST_CASE("--set takes a flow list as the value") {
  auto l = load_with(rc_pair(), {"qps.qb.states.INIT.qp_access_flags=[remote_write]"});
  REQUIRE_MESSAGE(l.errors() == 0, l.dump());
  const auto* t = l.transition("qb", qpo::spec::QpState::INIT);
  REQUIRE(t);
  REQUIRE(t->attr("qp_access_flags"));
  CHECK(t->attr("qp_access_flags")->number == 2);  // IBV_ACCESS_REMOTE_WRITE only
}

TEST_CASE("--set takes a flow map as the value; a bad key inside it is reported at the flag") {
  auto l = load_with(rc_pair(), {"qps.qb.cap={ max_send_wr: 8, max_sand_sge: 1 }"});
  const auto* d = l.one("Q101");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->loc.file == "--set qps.qb.cap={ max_send_wr: 8, max_sand_sge: 1 }");
  CHECK(d->path == "qps.qb.cap.max_sand_sge");
}

TEST_CASE("--set adding a misspelt key gets the loader's Q101, at the flag") {
  auto l = load_with(rc_pair(), {"qps.qa.statez.RTR.path_mtu=1024"});
  const auto* d = l.one("Q101");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->loc.file == "--set qps.qa.statez.RTR.path_mtu=1024");
  CHECK(d->hint == "did you mean 'states'?");
}

TEST_CASE("--set count: turns QPs into counted groups, and they still pair up") {
  auto l = load_with(rc_pair(), {"qps.qa.count=3", "qps.qb.count=3"});
  REQUIRE_MESSAGE(l.errors() == 0, l.dump());
  REQUIRE(l.qp("qa.2"));
  CHECK(l.qp("qa.2")->connect.name == "qb.2");
}

TEST_CASE("--set on a counted group reaches every QP of the group") {
  auto l = load_with(rc_pair(), {"qps.qa.count=2", "qps.qb.count=2", "qps.qa.states.RTR.path_mtu=2048"});
  REQUIRE_MESSAGE(l.errors() == 0, l.dump());
  for (const char* q : {"qa.0", "qa.1"}) {
    const auto* a = rtr_attr(l, q, "path_mtu");
    REQUIRE(a);
    CHECK(a->text == "2048");
  }
}

TEST_CASE("--set reaches an object whose name holds dots") {
  std::string yaml = rc_pair();
  for (const char* word : {"pd: pa", "{ pa: "})
    for (size_t at; (at = yaml.find(word)) != std::string::npos;) yaml.replace(at + std::string(word).find("pa"), 2, "p.a");
  auto l = load_with(yaml, {"pds.p.a.device=da"});
  CHECK_MESSAGE(l.errors() == 0, l.dump());
}

TEST_CASE("--set reaches a timeline step by its index") {
  auto l = load_with(rc_pair("{ path_mtu: auto }", "{ path_mtu: auto }", kTimeline), {"timeline.1.pause=5ms"});
  REQUIRE_MESSAGE(l.errors() == 0, l.dump());
  REQUIRE(l.scenario->timeline.size() == 2);
  CHECK(l.scenario->timeline[1].pause_ms == 5);
}

TEST_CASE("--set with an index past the end of a list is Q114") {
  auto l = load_with(rc_pair("{ path_mtu: auto }", "{ path_mtu: auto }", kTimeline), {"timeline.2.pause=5ms"});
  const auto* d = l.one("Q114");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "timeline is a list of 2 entries; '2' is not one of its indexes");
  CHECK(d->hint == "use an index from 0 to 1");
}

TEST_CASE("--set given twice for one key: the last one wins and is the one blamed") {
  auto l = load_with(rc_pair(), {"qps.qa.states.RTR.path_mtu=1024", "qps.qa.states.RTR.path_mtu=999"});
  const auto* d = l.one("Q401");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->loc.file == "--set qps.qa.states.RTR.path_mtu=999");
}

TEST_CASE("values --set did not touch keep their file lines") {
  auto l = load_with(rc_pair("{ path_mtu: 999 }"), {"qps.qb.cap.max_send_wr=16"});
  const auto* d = l.one("Q401");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->loc.file == "t.yaml");
  CHECK(d->loc.line == qpo::test::line_of(l.source.text(), "path_mtu: 999"));
}

TEST_CASE("the run report's JSON records the overrides applied") {
  qpo::report::RunReport r;
  r.overrides = {"qps.qa.states.RTR.path_mtu=1024", "workloads.w.size=4KiB"};
  qpo::util::JsonWriter w;
  qpo::report::render_json(w, r);
  CHECK(w.str().find("\"overrides\": [\n    \"qps.qa.states.RTR.path_mtu=1024\",\n    \"workloads.w.size=4KiB\"\n  ]") !=
        std::string::npos);
}

TEST_CASE("a script workload's size and iterations set with --set reach the script's args") {
  std::string workload =
      "workloads:\n  bw: { qp: qa, script: 'builtin:write_bw', local_mr: ma, remote_mr: mb, size: 64KiB }\n";
  auto l = load_with(rc_pair("{ path_mtu: auto }", "{ path_mtu: auto }", workload),
                     {"workloads.bw.size=4KiB", "workloads.bw.iterations=100"});
  REQUIRE_MESSAGE(l.errors() == 0, l.dump());
  auto spec = qpo::workload::script_spec(*l.scenario, *l.scenario->workload("bw"));
  REQUIRE(spec.args.find("size"));
  REQUIRE(spec.args.find("iterations"));
  CHECK(spec.args.find("size")->as_int() == 4096);
  CHECK(spec.args.find("iterations")->as_int() == 100);
}

TEST_CASE("the run report's text names the overrides above the verdict line") {
  qpo::report::RunReport r;
  r.scenario = "s";
  r.overrides = {"qps.qa.states.RTR.path_mtu=1024"};
  auto text = qpo::report::render_text(r, false);
  CHECK(text.find("with --set qps.qa.states.RTR.path_mtu=1024\nPASS s\n") != std::string::npos);
}

// Issue 30 item 1: the walk over a --set value follows aliases; one that contains itself has
// no end (it overflowed the stack), and a few nested aliases stand for billions of nodes.
TEST_CASE("--set with a value that contains itself through an alias is Q114, not a stack overflow") {
  auto l = load_with(rc_pair(), {"tags=&q [*q]"});
  const auto* d = l.one("Q114");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->loc.file == "--set tags=&q [*q]");
  CHECK(d->path == "tags");
  CHECK(d->message.find("contains itself through an alias") != std::string::npos);
  CHECK(l.errors() == 1);
}

TEST_CASE("--set with a value whose aliases expand past the node limit is Q114, not bad_alloc") {
  // Nine levels of ten: 10^9 nodes once expanded, in under 400 bytes.
  std::string value = "[&a0 [x,x,x,x,x,x,x,x,x,x]";
  for (int i = 1; i <= 9; ++i) {
    std::string prev = "*a" + std::to_string(i - 1);
    value += ", &a" + std::to_string(i) + " [" + prev;
    for (int k = 1; k < 10; ++k) value += "," + prev;
    value += "]";
  }
  value += "]";
  auto l = load_with(rc_pair(), {"tags=" + value});
  const auto* d = l.one("Q114");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "the value's aliases expand to more than 10000 nodes");
}

TEST_CASE("--set with a value nested in blocks past the parser's limit is Q114, not an uncaught exception") {
  // "- - - x" nests block sequences, which the flow-bracket guard does not see.
  std::string value;
  for (int i = 0; i < 2100; ++i) value += "- ";
  value += "x";
  auto l = load_with(rc_pair(), {"tags=" + value});
  const auto* d = l.one("Q114");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->path == "tags");
  CHECK(d->message == "the value nests deeper than 2000 levels");
}

// Issue 30 item 9: each override used to search its maps key by key, and the origins of what
// overrides wrote one by one (20,000 paths: 143 s). Counted: every map entry is read once.
TEST_CASE("20,000 --set paths read each map entry once") {
  std::string yaml = "version: 1\nmrs:\n";
  for (int i = 0; i < 20000; ++i) yaml += "  m" + std::to_string(i) + ": { pd: p, size: 4096 }\n";
  auto parsed = qpo::scenario::parse_yaml(yaml);
  qpo::yaml::Node root = parsed.root;
  std::vector<std::string> sets;
  for (int i = 0; i < 20000; ++i) sets.push_back("mrs.m" + std::to_string(i) + ".size=8192");
  qpo::diag::DiagSink sink;
  qpo::scenario::OverrideOrigins origins;
  auto work = qpo::scenario::apply_overrides(root, sets, sink, origins);
  CHECK(sink.error_count() == 0);
  // The top level (2 keys), mrs (20,000 names), each MR's map (2 keys) once: 60,002.
  CHECK(work.map_entries_read == 2 + 20000 + 20000 * 2);
  CHECK(root["mrs"]["m19999"]["size"].Scalar() == "8192");
  CHECK(origins.origin_of(root["mrs"]["m19999"]["size"])->file == "--set mrs.m19999.size=8192");
}

// Issue 30 item 17: a path through a list the file does not have made a map there (Q102).
TEST_CASE("--set into a list the file does not write is Q114, not Q102") {
  auto l = load_with(rc_pair(), {"timeline.1.pause=1ms"});
  const auto* d = l.one("Q114");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->loc.file == "--set timeline.1.pause=1ms");
  CHECK(d->message == "there is no list 'timeline' in the scenario to take entry 1 of");
  CHECK(l.errors() == 1);
}
