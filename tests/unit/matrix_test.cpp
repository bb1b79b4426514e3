// Matrices (suite/matrix.h): expansion, case names, the problems of a matrix (Q160-Q162), and
// a combination's bad value reported at its matrix entry (cli/matrix_check.h).
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>

#include "cli/matrix_check.h"
#include "scenario_fixture.h"
#include "suite/matrix.h"
#include "suite/suite.h"

namespace fs = std::filesystem;
using qpo::suite::Matrix;

namespace {

struct Parsed {
  std::optional<Matrix> m;
  qpo::diag::DiagSink sink;
  const qpo::diag::Diagnostic* one(const char* code) const {
    const qpo::diag::Diagnostic* found = nullptr;
    for (const auto& d : sink.all())
      if (d.code == code) {
        if (found) return nullptr;
        found = &d;
      }
    return found;
  }
};

std::unique_ptr<Parsed> parse(const std::string& yaml) {
  auto p = std::make_unique<Parsed>();
  YAML::Node n = YAML::Load(yaml);
  p->m = qpo::suite::parse_matrix(n["matrix"], "m.yaml", p->sink);
  return p;
}

// rc_pair with a workload for the matrices to change.
std::string pair_with_write() {
  return qpo::test::rc_pair() + "workloads:\n  write: { qp: qa, op: rdma_write, local_mr: ma, remote_mr: mb, size: 64, iterations: 10 }\n";
}

// A scratch folder of its own per test process.
fs::path scratch() {
  fs::path dir = fs::temp_directory_path() / ("qpo-matrix-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir;
}

}  // namespace

TEST_CASE("matrix: every combination, the first parameter slowest, named by its values") {
  auto p = parse("matrix:\n  qps.qa.states.RTR.path_mtu: [1024, 4096]\n  workloads.write.size: [4KiB, 64KiB]\n");
  REQUIRE(p->m);
  auto all = qpo::suite::expand(*p->m);
  REQUIRE(all.size() == 4);
  CHECK(all[0].suffix() == "[path_mtu=1024,size=4KiB]");
  CHECK(all[1].suffix() == "[path_mtu=1024,size=64KiB]");
  CHECK(all[2].suffix() == "[path_mtu=4096,size=4KiB]");
  CHECK(all[3].suffix() == "[path_mtu=4096,size=64KiB]");
  CHECK(all[3].overrides == std::vector<std::string>{"qps.qa.states.RTR.path_mtu=4096", "workloads.write.size=64KiB"});
  // Each override remembers where its value is written: line 2, the second value.
  CHECK(all[3].origins[0].file == "m.yaml");
  CHECK(all[3].origins[0].line == 2);
  CHECK(all[3].origins[0].col == 38);
}

TEST_CASE("matrix: a named parameter sets every path it lists to the same value") {
  auto p = parse("matrix:\n  mtu: { set: [qps.qa.states.RTR.path_mtu, qps.qb.states.RTR.path_mtu], values: [2048] }\n");
  REQUIRE(p->m);
  auto all = qpo::suite::expand(*p->m);
  REQUIRE(all.size() == 1);
  CHECK(all[0].suffix() == "[mtu=2048]");
  CHECK(all[0].overrides == std::vector<std::string>{"qps.qa.states.RTR.path_mtu=2048", "qps.qb.states.RTR.path_mtu=2048"});
}

TEST_CASE("matrix: a list value is passed as a flow list and named by it") {
  auto p = parse("matrix:\n  qps.qa.states.INIT.qp_access_flags: [[remote_write, remote_read], [remote_write]]\n");
  REQUIRE(p->m);
  auto all = qpo::suite::expand(*p->m);
  REQUIRE(all.size() == 2);
  CHECK(all[0].overrides[0] == "qps.qa.states.INIT.qp_access_flags=[remote_write, remote_read]");
  CHECK(all[1].suffix() == "[qp_access_flags=[remote_write]]");
}

TEST_CASE("matrix: a value listed twice is Q161") {
  auto p = parse("matrix:\n  workloads.write.size: [4KiB, 4KiB]\n");
  CHECK_FALSE(p->m);
  const auto* d = p->one("Q161");
  REQUIRE(d);
  CHECK(d->loc.line == 2);
  CHECK(d->loc.col == 32);
}

TEST_CASE("matrix: two parameters named alike by their paths' last keys is Q161 pointing at both") {
  auto p = parse("matrix:\n  qps.qa.states.RTR.path_mtu: [1024]\n  qps.qb.states.RTR.path_mtu: [1024]\n");
  CHECK_FALSE(p->m);
  const auto* d = p->one("Q161");
  REQUIRE(d);
  CHECK(d->message == "two matrix parameters are named 'path_mtu'");
  CHECK(d->loc.line == 3);
  REQUIRE(d->related.size() == 1);
  CHECK(d->related[0].loc.line == 2);
}

TEST_CASE("matrix: one path set by two parameters is Q161") {
  auto p = parse("matrix:\n  a: { set: workloads.write.size, values: [1] }\n  b: { set: workloads.write.size, values: [2] }\n");
  CHECK_FALSE(p->m);
  const auto* d = p->one("Q161");
  REQUIRE(d);
  CHECK(d->message == "'workloads.write.size' is set by two matrix parameters ('a' and 'b')");
}

TEST_CASE("matrix: an empty list of values is Q160") {
  auto p = parse("matrix:\n  workloads.write.size: []\n");
  CHECK_FALSE(p->m);
  REQUIRE(p->one("Q160"));
  CHECK(p->one("Q160")->message == "matrix parameter 'size' needs a non-empty list of values");
}

TEST_CASE("matrix: a list instead of a map of parameters is Q160") {
  auto p = parse("matrix: [1, 2]\n");
  CHECK_FALSE(p->m);
  REQUIRE(p->one("Q160"));
  CHECK(p->one("Q160")->message == "'matrix:' takes a map of parameters, found a list");
}

TEST_CASE("matrix: an unknown key in a named parameter is Q101, a missing set: Q104") {
  auto p = parse("matrix:\n  a: { sett: workloads.write.size, values: [1] }\n");
  CHECK_FALSE(p->m);
  CHECK(p->one("Q101"));
  auto q = parse("matrix:\n  a: { values: [1] }\n");
  CHECK_FALSE(q->m);
  REQUIRE(q->one("Q104"));
  CHECK(q->one("Q104")->message == "matrix parameter 'a' has no 'set:'");
}

TEST_CASE("matrix: more than 10,000 combinations is Q162") {
  std::string values = "[";
  for (int i = 0; i < 101; ++i) values += (i ? ", " : "") + std::to_string(i);
  values += "]";
  auto p = parse("matrix:\n  a: { set: x.a, values: " + values + " }\n  b: { set: x.b, values: " + values + " }\n");
  CHECK_FALSE(p->m);
  CHECK(p->one("Q162"));
  auto ok = parse("matrix:\n  a: { set: x.a, values: " + values + " }\n  b: { set: x.b, values: [1, 2] }\n");
  REQUIRE(ok->m);
  CHECK(ok->m->combinations() == 202);
}

TEST_CASE("collect: a scenario with a matrix is one case per combination, named by its parameters") {
  fs::path dir = scratch();
  std::ofstream(dir / "s.yaml") << pair_with_write() << "matrix:\n  workloads.write.size: [64, 4KiB]\n";
  qpo::suite::Options o;
  o.paths = {(dir / "s.yaml").string()};
  std::vector<std::string> problems;
  qpo::diag::DiagSink sink;
  auto cases = qpo::suite::collect(o, &problems, &sink);
  fs::remove_all(dir);
  CHECK_FALSE(sink.has_errors());
  REQUIRE(cases.size() == 2);
  CHECK(cases[0].name == "rc-pair[size=64]");
  CHECK(cases[1].name == "rc-pair[size=4KiB]");
  CHECK(cases[1].parameters == std::vector<std::pair<std::string, std::string>>{{"size", "4KiB"}});
  CHECK(cases[1].overrides == std::vector<std::string>{"workloads.write.size=4KiB"});
}

TEST_CASE("collect: --matrix replaces the scenarios' own matrix, and --name filters the cases") {
  fs::path dir = scratch();
  std::ofstream(dir / "s.yaml") << pair_with_write() << "matrix:\n  workloads.write.size: [64, 4KiB]\n";
  std::ofstream(dir / "m.yml") << "matrix:\n  workloads.write.iterations: [10, 20, 30]\n";
  qpo::suite::Options o;
  o.paths = {(dir / "s.yaml").string()};
  o.matrix_file = (dir / "m.yml").string();
  o.name_filter = "iterations=2";
  std::vector<std::string> problems;
  qpo::diag::DiagSink sink;
  auto cases = qpo::suite::collect(o, &problems, &sink);
  fs::remove_all(dir);
  REQUIRE(cases.size() == 1);
  CHECK(cases[0].name == "rc-pair[iterations=20]");
}

TEST_CASE("a combination's bad value is reported at its matrix entry, once, and fails that case") {
  fs::path dir = scratch();
  std::string text = pair_with_write() +
                     "matrix:\n  mtu: { set: [qps.qa.states.RTR.path_mtu, qps.qb.states.RTR.path_mtu], values: [1024, 999] }\n"
                     "  workloads.write.size: [64, 128]\n";
  std::ofstream(dir / "s.yaml") << text;
  std::string file = (dir / "s.yaml").string();
  // qpo validate: the file is valid, one of its values is not.
  auto l = qpo::cli::load_and_validate(file);
  qpo::cli::check_matrix(file, {}, *l);
  std::vector<const qpo::diag::Diagnostic*> errors;
  for (const auto& d : l->diags.all())
    if (d.severity == qpo::diag::Severity::Error) errors.push_back(&d);
  std::string all;
  for (const auto* d : errors) all += d->code + " " + d->message + "\n";
  // Two combinations have 999, on two paths: one diagnostic per path, at the one value.
  REQUIRE_MESSAGE(errors.size() == 2, all);
  CHECK(errors[0]->code == "Q401");
  CHECK(errors[0]->loc.file == file);
  CHECK(errors[0]->loc.line == qpo::test::line_of(text, "values: [1024, 999]"));
  CHECK(errors[0]->loc.col == static_cast<int>(text.substr(text.find("  mtu:")).find("999")) + 1);
  CHECK(errors[1]->loc.line == errors[0]->loc.line);
  // qpo test: the two cases with 999 fail before anything runs, the others are untouched.
  qpo::suite::Options o;
  o.paths = {file};
  std::vector<std::string> problems;
  auto cases = qpo::suite::collect(o, &problems);
  CHECK(qpo::cli::validate_matrix_cases(cases, {}, false) == 2);
  fs::remove_all(dir);
  REQUIRE(cases.size() == 4);
  CHECK(cases[0].outcome == "");
  CHECK(cases[2].outcome == "fail");
  CHECK(cases[2].reason.rfind("invalid: error[Q401]: path_mtu", 0) == 0);
}

TEST_CASE("a combination's path through a missing object is Q114 at the matrix entry") {
  fs::path dir = scratch();
  std::string text = pair_with_write() + "matrix:\n  qps.qz.type: [RC]\n";
  std::ofstream(dir / "s.yaml") << text;
  std::string file = (dir / "s.yaml").string();
  auto l = qpo::cli::load_and_validate(file);
  qpo::cli::check_matrix(file, {}, *l);
  fs::remove_all(dir);
  const qpo::diag::Diagnostic* d = nullptr;
  for (const auto& x : l->diags.all())
    if (x.code == "Q114") d = &x;
  REQUIRE(d);
  CHECK(d->message == "'qz' is not defined in qps:");
  CHECK(d->loc.line == qpo::test::line_of(text, "qps.qz.type"));
}

// Issue 30 item 10: qpo validate parsed every file a second time to look for a matrix.
TEST_CASE("the loader says whether the file has a matrix, so validate need not parse it again") {
  qpo::test::Loaded without(qpo::test::rc_pair());
  without.scenario = qpo::scenario::load_scenario(without.source, without.sink);
  REQUIRE(without.scenario);
  CHECK_FALSE(without.scenario->has_matrix);
  qpo::test::Loaded with(qpo::test::rc_pair() + "matrix: { qps.qa.states.RTR.path_mtu: [1024, 4096] }\n");
  with.scenario = qpo::scenario::load_scenario(with.source, with.sink);
  REQUIRE(with.scenario);
  CHECK(with.scenario->has_matrix);
}

// Issue 30 item 1: a matrix value goes through the same walk as --set.
TEST_CASE("a matrix value that contains itself through an alias is Q114 at the value, not a crash") {
  fs::path dir = scratch();
  std::string text = pair_with_write() + "matrix:\n  tags: [&q [*q]]\n";
  std::ofstream(dir / "s.yaml") << text;
  std::string file = (dir / "s.yaml").string();
  auto l = qpo::cli::load_and_validate(file);
  qpo::cli::check_matrix(file, {}, *l);
  fs::remove_all(dir);
  const qpo::diag::Diagnostic* d = nullptr;
  for (const auto& x : l->diags.all())
    if (x.code == "Q114") d = &x;
  REQUIRE(d);
  CHECK(d->message.find("contains itself through an alias") != std::string::npos);
  CHECK(d->loc.line == qpo::test::line_of(text, "tags: [&q"));
}
