// The plan is the program: for every example scenario and every scenario of the regression
// suite, run in the lab, the report's lines walk the plan's steps of each host in order, one
// step after the other, each step reporting at least one line and no line reporting on
// anything else. A run that stops early (unsupported, an expected failure that ends it) walks
// a prefix of the plan and then its teardown. Runs inside the lab guest (a real rxe device).
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "check/validate.h"
#include "exec/executor.h"
#include "plan/plan.h"
#include "scenario/loader.h"
#include "util/source_text.h"

namespace fs = std::filesystem;

namespace {

std::vector<std::string> scenario_files(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".yaml") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

// The plan steps each line reports on, for one host, with repeats folded.
std::vector<int> walked(const qpo::report::RunReport& r, const std::string& host) {
  std::vector<int> out;
  for (const auto& s : r.steps)
    if (s.host == host && (out.empty() || out.back() != s.plan_step)) out.push_back(s.plan_step);
  return out;
}

std::string text(const std::vector<int>& v) {
  std::string out;
  for (int x : v) out += (out.empty() ? "" : " ") + std::to_string(x);
  return out;
}

void check_file(const std::string& path) {
  CAPTURE(path);
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in);
  std::string yaml((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  qpo::util::SourceText source(path, yaml);
  qpo::diag::DiagSink sink;
  auto s = qpo::scenario::load_scenario(source, sink);
  REQUIRE(s);
  auto checked = qpo::check::validate(*s, sink);
  if (sink.has_errors()) return;  // the suite's invalid scenarios are the validator's to test
  auto plan = qpo::plan::build_plan(checked);
  qpo::exec::RunOptions o;
  o.all_hosts_local = true;
  auto report = qpo::exec::run_scenario(checked, plan, o);
  for (const auto& h : plan.hosts) {
    if (h.steps.empty()) continue;
    CAPTURE(h.host);
    std::vector<int> want;
    for (const auto& st : h.steps) want.push_back(st.index);
    auto got = walked(report, h.host);
    if (report.verdict == qpo::report::Verdict::Pass) {
      CHECK_MESSAGE(text(got) == text(want), "verdict PASS");
      continue;
    }
    // Stopped early: strictly increasing plan steps (a prefix, then some of the teardown).
    CAPTURE(report.reason);
    CAPTURE(text(got));
    CHECK(std::find(got.begin(), got.end(), 0) == got.end());
    CHECK(std::is_sorted(got.begin(), got.end()));
  }
}

}  // namespace

TEST_CASE("every example scenario's run walks its plan, step by step, on every host") {
  for (const auto& f : scenario_files(QPO_SOURCE_DIR "/scenarios")) check_file(f);
}

TEST_CASE("every regression-suite scenario's run walks its plan, step by step") {
  for (const auto& f : scenario_files(QPO_SOURCE_DIR "/tests/scenarios/suite")) check_file(f);
}
