// The plan is the program: for every example scenario and every scenario of the regression
// suite, run in the lab, the report's lines walk the plan's steps of each host in order, one
// step after the other, each step reporting at least one line and no line reporting on
// anything else. A run that stops early (unsupported, an expected failure that ends it) walks
// a prefix of the plan's steps before teardown, then teardown steps in order. Each run's
// verdict is asserted. Runs inside the lab guest (a real rxe device).
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
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

// What one lab guest's rxe0 cannot do, by scenario: RAW_PACKET and XRC QPs, completion
// timestamps, and rdma_cm between two hosts on one device (the two-guest tests run those).
const std::set<std::string>& unsupported_on_rxe() {
  static const std::set<std::string> k{
      "raw-packet",         "xrc-pair",         "rc-write-lat-device-clock", "feat-raw-packet-skip",
      "feat-xrc-skip",      "two-host-cm-exchange", "two-host-cm-rc",        "two-host-cm-reject",
      "two-host-cm-uc",     "two-host-cm-ud",   "two-host-cm-ud-multicast"};
  return k;
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
  // The verdict is part of what the run must say: every scenario here passes on rxe, except
  // those whose feature rxe lacks, which say so (UNSUPPORTED), never pass or fail.
  CAPTURE(report.reason);
  auto want_verdict = unsupported_on_rxe().count(fs::path(path).stem().string()) ? qpo::report::Verdict::Unsupported
                                                                                   : qpo::report::Verdict::Pass;
  CHECK(std::string(qpo::report::verdict_name(report.verdict)) == qpo::report::verdict_name(want_verdict));
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
    // Stopped early: a prefix of the steps before teardown, then teardown steps in order.
    CAPTURE(report.reason);
    CAPTURE(text(got));
    CHECK(std::find(got.begin(), got.end(), 0) == got.end());
    CHECK(std::is_sorted(got.begin(), got.end()));
    std::vector<int> want_before, got_before;
    for (const auto& st : h.steps)
      if (st.phase != qpo::plan::Phase::Teardown) want_before.push_back(st.index);
    for (int x : got)
      if (std::find(want_before.begin(), want_before.end(), x) != want_before.end()) got_before.push_back(x);
    want_before.resize(std::min(want_before.size(), got_before.size()));
    CHECK_MESSAGE(text(got_before) == text(want_before), "not a prefix of the plan before teardown");
  }
}

}  // namespace

TEST_CASE("every example scenario's run walks its plan, step by step, on every host") {
  for (const auto& f : scenario_files(QPO_SOURCE_DIR "/scenarios")) check_file(f);
}

TEST_CASE("every regression-suite scenario's run walks its plan, step by step") {
  for (const auto& f : scenario_files(QPO_SOURCE_DIR "/tests/scenarios/suite")) check_file(f);
}
