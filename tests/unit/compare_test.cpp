// qpo compare (cli/compare.h) on the small result files in tests/compare/, and its exit codes
// through the binary.
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <cstdio>
#include <string>

#include "cli/compare.h"
#include "util/json_writer.h"

namespace cmp = qpo::cli::compare;

namespace {

const std::string kDir = std::string(QPO_SOURCE_DIR) + "/tests/compare/";

cmp::Results results(const std::string& name) {
  std::string error;
  auto r = cmp::read_results(kDir + name, &error);
  REQUIRE_MESSAGE(r, error);
  return *r;
}

cmp::Comparison against_baseline(const std::string& name, double tolerance = 5) {
  return cmp::compare(results(name), results("baseline.json"), tolerance);
}

const cmp::Row* row(const cmp::Comparison& c, const std::string& workload, const std::string& figure) {
  for (const auto& r : c.rows)
    if (r.workload == workload && r.figure == figure) return &r;
  return nullptr;
}

// qpo's standard output and exit status.
std::string qpo_output(const std::string& args, int* exit_status) {
  std::string cmd = std::string(QPO_BINARY) + " " + args + " 2>&1";
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p);
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  int status = pclose(p);
  *exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

cmp::Comparison one_figure(const std::string& figure, const std::string& now, const std::string& baseline) {
  std::string error;
  auto n = cmp::parse_results(R"({"workloads": [{"name": "w", "summary": {")" + figure + "\": " + now + "}}]}", "new.json", &error);
  auto b = cmp::parse_results(R"({"workloads": [{"name": "w", "summary": {")" + figure + "\": " + baseline + "}}]}", "base.json", &error);
  REQUIRE_MESSAGE(n, error);
  REQUIRE_MESSAGE(b, error);
  return cmp::compare(*n, *b, 5);
}

int qpo_exit(const std::string& args) {
  std::string cmd = std::string(QPO_BINARY) + " " + args + " >/dev/null 2>&1";
  int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

TEST_CASE("compare: bandwidth up past the tolerance is better, not a regression") {
  auto c = against_baseline("improved.json");
  const auto* r = row(c, "write_bw", "bw_avg");
  REQUIRE(r);
  CHECK(r->baseline == 100.0);
  CHECK(r->now == 120.0);
  CHECK(*r->change_pct == doctest::Approx(20.0));
  CHECK(r->verdict == cmp::Verdict::Better);
  CHECK(c.regressions() == 0);
}

TEST_CASE("compare: bandwidth down past the tolerance is a regression") {
  auto c = against_baseline("bw-down.json");
  const auto* r = row(c, "write_bw", "bw_avg");
  REQUIRE(r);
  CHECK(*r->change_pct == doctest::Approx(-10.0));
  CHECK(r->verdict == cmp::Verdict::Regression);
  CHECK(c.regressions() == 1);
}

TEST_CASE("compare: a change inside the tolerance is within, either way") {
  auto c = against_baseline("within.json");
  REQUIRE(row(c, "write_bw", "bw_avg"));
  CHECK(row(c, "write_bw", "bw_avg")->verdict == cmp::Verdict::Within);    // -3%
  REQUIRE(row(c, "write_bw", "msg_rate"));
  CHECK(row(c, "write_bw", "msg_rate")->verdict == cmp::Verdict::Within);  // +3.1%
  CHECK(c.regressions() == 0);
}

TEST_CASE("compare: the tolerance decides: -10% passes a 15% tolerance") {
  auto c = against_baseline("bw-down.json", 15);
  CHECK(row(c, "write_bw", "bw_avg")->verdict == cmp::Verdict::Within);
}

TEST_CASE("compare: latency up is a regression, latency down is better") {
  auto c = against_baseline("lat-up.json");
  const auto* typical = row(c, "write_lat", "t_typical");
  REQUIRE(typical);
  CHECK(*typical->change_pct == doctest::Approx(50.0));
  CHECK(typical->verdict == cmp::Verdict::Regression);
  const auto* min = row(c, "write_lat", "t_min");
  REQUIRE(min);
  CHECK(min->verdict == cmp::Verdict::Better);  // 10 -> 8 usec
}

TEST_CASE("compare: workloads in one file only are listed, not failed") {
  auto c = against_baseline("new-workload.json");
  CHECK(c.only_new == std::vector<std::string>{"new_only"});
  CHECK(c.only_baseline ==
        std::vector<std::string>{"write_lat", "write_lat[size=2]", "write_lat[size=64]", "old_only"});
  CHECK(c.regressions() == 0);
  auto text = cmp::render_text(c);
  CHECK(text.find("only in " + kDir + "new-workload.json: new_only\n") != std::string::npos);
}

TEST_CASE("compare: a sweep's runs pair by size") {
  auto base = results("baseline.json");
  auto c = cmp::compare(base, base, 5);
  REQUIRE(row(c, "write_lat[size=2]", "t_typical"));
  CHECK(row(c, "write_lat[size=2]", "t_typical")->baseline == 15.0);
}

TEST_CASE("compare: a list of runs pairs workloads by scenario/name") {
  auto r = results("runs.json");
  REQUIRE(r.workloads.size() == 2);
  CHECK(r.workloads[0].key == "a/write_bw");
  CHECK(r.workloads[1].key == "b/write_bw");
}

TEST_CASE("compare: text output has a row per figure and the regression count last") {
  auto text = cmp::render_text(against_baseline("bw-down.json"));
  CHECK(text ==
        "workload  figure  baseline  new      change  verdict\n"
        "write_bw  bw_avg  100 MB/s  90 MB/s  -10.0%  REGRESSION\n"
        "only in " + kDir + "baseline.json: write_lat\n"
        "only in " + kDir + "baseline.json: write_lat[size=2]\n"
        "only in " + kDir + "baseline.json: write_lat[size=64]\n"
        "only in " + kDir + "baseline.json: old_only\n"
        "1 regression beyond 5%\n");
}

TEST_CASE("compare: a file that is not JSON is refused, naming the file") {
  std::string error;
  CHECK_FALSE(cmp::read_results(kDir + "truncated.json", &error));
  CHECK(error.rfind(kDir + "truncated.json: not JSON: ", 0) == 0);
}

TEST_CASE("compare: JSON that is not a run result is refused, naming the file") {
  std::string error;
  CHECK_FALSE(cmp::read_results(kDir + "validate-output.json", &error));
  CHECK(error == kDir + "validate-output.json: not a qpo run result (no \"workloads\" list; write it with qpo run --format json)");
}

TEST_CASE("compare: a missing file is refused, naming it") {
  std::string error;
  CHECK_FALSE(cmp::read_results(kDir + "absent.json", &error));
  CHECK(error == "cannot read " + kDir + "absent.json: No such file or directory");
}

TEST_CASE("compare: tolerance is a percentage, with or without %") {
  CHECK(cmp::parse_tolerance("5%") == 5.0);
  CHECK(cmp::parse_tolerance("2.5") == 2.5);
  CHECK_FALSE(cmp::parse_tolerance("-1%"));
  CHECK_FALSE(cmp::parse_tolerance("five"));
}

TEST_CASE("qpo compare exits 0 without a regression, 1 with one, 2 on unreadable input") {
  CHECK(qpo_exit("compare " + kDir + "improved.json " + kDir + "baseline.json") == 0);
  CHECK(qpo_exit("compare " + kDir + "bw-down.json " + kDir + "baseline.json") == 1);
  CHECK(qpo_exit("compare --tolerance 15% " + kDir + "bw-down.json " + kDir + "baseline.json") == 0);
  CHECK(qpo_exit("compare --format json " + kDir + "lat-up.json " + kDir + "baseline.json") == 1);
  CHECK(qpo_exit("compare " + kDir + "truncated.json " + kDir + "baseline.json") == 2);
  CHECK(qpo_exit("compare " + kDir + "improved.json " + kDir + "absent.json") == 2);
  CHECK(qpo_exit("compare --tolerance lots " + kDir + "improved.json " + kDir + "baseline.json") == 2);
}

TEST_CASE("compare: loss (a fraction in the file) is shown in %, and up is a regression") {
  std::string error;
  auto now = cmp::parse_results(R"({"workloads": [{"name": "incast", "summary": {"loss": 0.02}}]})", "new.json", &error);
  auto base = cmp::parse_results(R"({"workloads": [{"name": "incast", "summary": {"loss": 0.01}}]})", "base.json", &error);
  REQUIRE_MESSAGE(now, error);
  REQUIRE_MESSAGE(base, error);
  auto c = cmp::compare(*now, *base, 5);
  const auto* r = row(c, "incast", "loss");
  REQUIRE(r);
  CHECK(r->unit == "%");
  CHECK(r->now == doctest::Approx(2.0));
  CHECK(r->verdict == cmp::Verdict::Regression);
}

TEST_CASE("compare: \"runs\" holding numbers is refused, naming the workload and the field (issue 30 item 4)") {
  std::string error;
  CHECK_FALSE(cmp::parse_results(R"({"workloads": [{"name": "w", "summary": {}, "runs": [1,2]}]})", "new.json", &error));
  CHECK(error == "new.json: workload w: \"runs\"[0] is a number (line 1, column 54), expected an object (one message size's figures)");
  CHECK_FALSE(cmp::parse_results(R"({"workloads": [{"name": "w", "runs": {"size": 1}}]})", "new.json", &error));
  CHECK(error == "new.json: workload w: \"runs\" is an object (line 1, column 38), expected a list of objects (one per message size)");
}

TEST_CASE("compare: a change too large for a number is never +inf%: n/a with the reason, and past the tolerance") {
  auto c = one_figure("bw_avg", "100", "5e-324");
  REQUIRE(c.rows.size() == 1);
  CHECK_FALSE(c.rows[0].change_pct);
  CHECK(c.rows[0].verdict == cmp::Verdict::Better);
  auto text = cmp::render_text(c);
  CHECK(text.find("inf") == std::string::npos);
  CHECK(text.find("n/a (too large to show)  better") != std::string::npos);
  qpo::util::JsonWriter w;
  cmp::render_json(w, c);
  CHECK(w.str().find("\"change_pct\": null,\n      \"change_note\": \"too large to show\"") != std::string::npos);
}

TEST_CASE("compare: a baseline of 0 has no percentage: n/a (baseline is 0), judged by direction") {
  auto c = one_figure("t_typical", "3", "0");
  REQUIRE(c.rows.size() == 1);
  CHECK_FALSE(c.rows[0].change_pct);
  CHECK(c.rows[0].no_change_why == "baseline is 0");
  CHECK(c.rows[0].verdict == cmp::Verdict::Regression);  // latency up from 0
  CHECK(cmp::render_text(c).find("n/a (baseline is 0)  REGRESSION") != std::string::npos);
}

TEST_CASE("compare: a huge finite change prints in a few characters") {
  auto c = one_figure("bw_avg", "1e300", "1");
  REQUIRE(c.rows.size() == 1);
  CHECK(cmp::render_text(c).find("+1e+302%") != std::string::npos);
}

TEST_CASE("compare: YAML anchors and aliases are not JSON (issue 30 item 9: 24 KB of them made 9e6 figures)") {
  std::string error;
  CHECK_FALSE(cmp::parse_results(R"({"workloads": &w [{"name": "a", "summary": {"bw_avg": 1}}], "more": *w})", "a.json", &error));
  CHECK(error == "a.json: not JSON: line 1, column 15: expected a value, found '&' (a YAML anchor or alias is not JSON)");
}

TEST_CASE("compare: no workload in common is nothing to compare, not \"no regression\"") {
  auto c = cmp::compare(results("runs.json"), results("baseline.json"), 5);
  CHECK(c.nothing_compared());
  auto text = cmp::render_text(c);
  CHECK(text.find("no regression") == std::string::npos);
  CHECK(text.substr(text.rfind("only in")).find("\nnothing to compare: no workload is in both files\n") != std::string::npos);
}

TEST_CASE("qpo compare with no workload in common exits 2 and says there is nothing to compare") {
  int status = -1;
  auto out = qpo_output("compare " + kDir + "runs.json " + kDir + "baseline.json", &status);
  CHECK(status == 2);
  CHECK(out.find("nothing to compare: no workload is in both files") != std::string::npos);
  out = qpo_output("compare --format json " + kDir + "runs.json " + kDir + "baseline.json", &status);
  CHECK(status == 2);
  CHECK(out.find("qpo compare: nothing to compare: no workload is in both files") != std::string::npos);
}
