// qpo test DIR|FILES...: a regression suite of scenarios with a verdict per scenario.
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

#include "cli/baseline.h"
#include "cli/commands.h"
#include "cli/html_report.h"
#include "cli/input.h"
#include "cli/lab.h"
#include "cli/matrix_check.h"
#include "diag/render.h"
#include "suite/suite.h"
#include "verbs/device.h"
#include "util/strings.h"

namespace qpo::cli {

namespace {

// Whether two paths name one folder (absolute, normalised, without a trailing '/'); false
// when either cannot be resolved.
bool same_folder(const std::string& a, const std::string& b) {
  namespace fs = std::filesystem;
  auto resolved = [](const std::string& p, bool* ok) {
    std::error_code ec;
    fs::path abs = fs::absolute(p, ec);
    if (!ec) abs = fs::weakly_canonical(abs, ec);
    *ok = !ec;
    std::string s = abs.lexically_normal().string();
    while (s.size() > 1 && s.back() == '/') s.pop_back();
    return s;
  };
  bool ok_a = false, ok_b = false;
  std::string x = resolved(a, &ok_a), y = resolved(b, &ok_b);
  return ok_a && ok_b && x == y;
}

// The suite's page: each case's run from the results its qpo run wrote (--results), or,
// when it wrote none (invalid scenario, timeout), the case's outcome and reason.
bool write_suite_report(const std::string& file, const std::vector<suite::Case>& cases) {
  std::vector<report::RunReport> runs;
  for (size_t i = 0; i < cases.size(); ++i) {
    std::vector<report::RunReport> got;
    std::string error;
    const std::string& path = cases[i].results;
    if (!path.empty() && std::filesystem::exists(path) && read_run_results(path, &got, &error) && got.size() == 1) {
      runs.push_back(std::move(got[0]));
      continue;
    }
    report::RunReport r;
    r.scenario = cases[i].name;
    r.file = cases[i].file;
    const auto& out = cases[i].outcome;
    r.verdict = out == "pass" ? report::Verdict::Pass : out == "skip" ? report::Verdict::Unsupported
                : out == "fail" ? report::Verdict::Fail : report::Verdict::Error;
    r.reason = cases[i].reason;
    runs.push_back(std::move(r));
  }
  std::vector<report::HtmlRun> pages;
  for (size_t i = 0; i < runs.size(); ++i) pages.push_back({&runs[i], scenario_text_for_report(cases[i].file)});
  return write_report_file(file, report::render_html_suite(pages, "qpo test: " + std::to_string(cases.size()) + " scenarios"));
}

}  // namespace

Action add_test(CLI::App& app) {
  struct Options {
    suite::Options suite;
    std::string junit, report;
    bool lab = false, no_lab = false, local = false;
    std::vector<std::string> overrides;
    std::string baseline, save_baseline, tolerance = "5%", json, results;
  };
  auto opts = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("test", "Run a suite of scenarios; a verdict per scenario, JUnit/TAP for CI");
  cmd->footer(
      "Each scenario runs as its own `qpo run` (its expectations decide: transitions that must fail\n"
      "with an errno, completions that must have a status). Outcomes: pass, fail (including invalid\n"
      "scenarios and timeouts), skip (the device lacks a capability; the reason is shown, and a skip\n"
      "is never counted as a pass). The last line is `N passed, N failed, N skipped`; exit 0 only if\n"
      "nothing failed. Without an RDMA device the whole suite runs in one Soft-RoCE lab guest; a suite\n"
      "with a multi-host scenario (and no --local) runs every scenario in lab guests of its own (two\n"
      "for a multi-host one, see qpo run --help).\n\n"
      "Example:\n  qpo test scenarios/\n  qpo test --tag rc --junit results.xml scenarios/ tests/scenarios/run/");
  cmd->add_option("paths", opts->suite.paths, "Scenario files or directories (searched for *.yaml)")->required();
  cmd->add_option("--tag", opts->suite.tags, "Only scenarios with this tag (repeatable)");
  cmd->add_option("--name", opts->suite.name_filter, "Only scenarios whose name or file contains this");
  cmd->add_option("-j,--jobs", opts->suite.jobs, "Scenarios run at the same time")->capture_default_str();
  cmd->add_option("--timeout", opts->suite.timeout_s, "Seconds per scenario before it is interrupted")
      ->check(timeout_range(kMaxTimeoutSeconds, "seconds"))
      ->capture_default_str();
  cmd->add_option("--junit", opts->junit, "Write JUnit XML here");
  cmd->add_flag("--tap", opts->suite.tap, "Print TAP instead of the summary lines");
  cmd->add_flag("--lab", opts->lab, "Run the suite in the Soft-RoCE lab even if this host has RDMA devices");
  cmd->add_flag("--no-lab", opts->no_lab, "Never use the lab");
  cmd->add_flag("--local", opts->local, "Run multi-host scenarios with every host on this machine (qpo run --local)");
  add_set_option(*cmd, opts->overrides);  // passed to every scenario's qpo run
  cmd->add_option("--report", opts->report,
                  "Also write the suite as one self-contained HTML page: a verdict per scenario, then each run's "
                  "page (qpo run --report)");
  cmd->add_option("--matrix", opts->suite.matrix_file,
                  "Run every scenario once per combination of this file's matrix: (replaces their own matrix:)");
  cmd->add_option("--baseline", opts->baseline, "Compare each case's figures with DIR/<case>.json; a regression fails the case");
  cmd->add_option("--tolerance", opts->tolerance, "How much worse a figure may get against --baseline, in %")->capture_default_str();
  cmd->add_option("--save-baseline", opts->save_baseline, "Write each passed case's result to DIR/<case>.json");
  cmd->add_option("--json", opts->json, "Write the cases (parameters, verdicts, figures, baseline comparisons) as JSON here");
  cmd->add_option("--results", opts->results,
                  "Keep each case's run, whatever its outcome, as DIR/<case>.json (what qpo run --format json prints: "
                  "every step's line, the verdict, the figures); --json names each case's file");
  return [opts]() {
    auto& o = opts->suite;
    auto tolerance = compare::parse_tolerance(opts->tolerance);
    if (!tolerance) {
      std::cerr << "qpo test: --tolerance " << util::printable(opts->tolerance, 200) << ": expected a percentage like 5%\n";
      return static_cast<int>(kSystemError);
    }
    // Static validation first: a matrix that cannot be used, or one combination that is
    // invalid, stops the suite before any case runs.
    std::vector<std::string> problems;
    diag::DiagSink matrix_diags;
    auto cases = suite::collect(o, &problems, &matrix_diags);
    if (matrix_diags.has_errors()) {
      for (const auto& d : matrix_diags.all()) std::cerr << diag::render_text(d, {}, false) << "\n";
      std::cerr << "qpo test: the matrix cannot be used; nothing run\n";
      return static_cast<int>(kInvalid);
    }
    size_t invalid = validate_matrix_cases(cases, opts->overrides, false);
    for (auto& c : cases)
      if (invalid && c.outcome.empty()) {
        c.outcome = "skip";
        c.reason = "not run: " + std::to_string(invalid) + " matrix case" + (invalid > 1 ? "s are" : " is") + " invalid";
      }
    bool use_lab = !invalid && (opts->lab || (!opts->no_lab && verbs::list_devices().empty()));
    // A multi-host scenario needs two lab guests (qpo run boots them), which one guest for the
    // whole suite cannot hold: then every scenario's qpo run enters the lab by itself, here.
    std::string lab_flag = "--no-lab";  // each case's qpo run: the suite is already where it runs
    size_t multi_host = 0;
    if (use_lab && !opts->local)
      for (const auto& c : cases) multi_host += c.hosts > 1;
    if (use_lab && multi_host) {
      std::cerr << "qpo: " << multi_host << " multi-host scenario" << (multi_host > 1 ? "s" : "")
                << " (two lab guests each, without --local): every scenario runs in lab guests of its own\n";
      use_lab = false;
      lab_flag = opts->lab ? "--lab" : "";  // "": qpo run finds no device and enters the lab itself
    }
    if (use_lab) {
      std::vector<std::string> args{"test", "--no-lab", "-j", std::to_string(o.jobs), "--timeout",
                                    std::to_string(o.timeout_s)};
      for (const auto& t : o.tags) args.insert(args.end(), {"--tag", t});
      if (!o.name_filter.empty()) args.insert(args.end(), {"--name", o.name_filter});
      // One guest for the whole suite; per-scenario timeouts still apply inside it.
      std::vector<std::string> lab_args{"--timeout", "1800"};
      // The guest's own writes vanish at power-off; the lab's --out folder is shared with the
      // host: the one folder that holds every file the suite writes.
      namespace fs = std::filesystem;
      std::optional<fs::path> out_dir;
      auto output = [&](const char* flag, const std::string& path, bool is_dir) {
        if (path.empty()) return;
        fs::path abs = fs::absolute(path).lexically_normal();
        args.insert(args.end(), {flag, abs.string()});
        fs::path dir = is_dir ? abs : abs.parent_path();
        if (!out_dir) out_dir = dir;
        while (!out_dir->empty() && std::mismatch(out_dir->begin(), out_dir->end(), dir.begin(), dir.end()).first != out_dir->end())
          out_dir = out_dir->parent_path();
      };
      output("--junit", opts->junit, false);
      output("--json", opts->json, false);
      output("--save-baseline", opts->save_baseline, true);
      output("--results", opts->results, true);
      if (out_dir) {
        if (*out_dir == out_dir->root_path()) {
          std::cerr << "qpo test: in the lab, --junit, --json, --results and --save-baseline must share a folder below /\n";
          return static_cast<int>(kSystemError);
        }
        lab_args.insert(lab_args.end(), {"--out", out_dir->string()});
      }
      if (!opts->report.empty()) {
        std::string path = absolute_report_path(opts->report);
        args.insert(args.end(), {"--report", path});
        auto out = report_lab_args(path);
        auto at = std::find(lab_args.begin(), lab_args.end(), "--out");
        if (at != lab_args.end() && *(at + 1) != out[1]) {
          std::cerr << "qpo test: in the lab, --junit and --report must name files in one directory\n";
          return static_cast<int>(kSystemError);
        }
        if (at == lab_args.end()) lab_args.insert(lab_args.end(), out.begin(), out.end());
      }
      if (!o.matrix_file.empty()) args.insert(args.end(), {"--matrix", fs::absolute(o.matrix_file).string()});
      if (!opts->baseline.empty()) args.insert(args.end(), {"--baseline", fs::absolute(opts->baseline).string()});
      args.insert(args.end(), {"--tolerance", opts->tolerance});
      if (opts->local) args.push_back("--local");
      if (o.tap) args.push_back("--tap");
      for (const auto& ov : opts->overrides) args.insert(args.end(), {"--set", ov});
      args.insert(args.end(), o.paths.begin(), o.paths.end());
      std::cerr << "qpo: running the suite in the Soft-RoCE lab\n";
      // The guest's writes vanish at power-off; JUnit goes through the lab's shared folder.
      return run_in_lab(args, lab_args);
    }
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    o.qpo = n > 0 ? std::string(self, static_cast<size_t>(n)) : "qpo";
    o.run_args.clear();
    if (!lab_flag.empty()) o.run_args.push_back(lab_flag);
    if (opts->local) o.run_args.push_back("--local");
    for (const auto& ov : opts->overrides) o.run_args.insert(o.run_args.end(), {"--set", ov});
    for (const auto& p : problems) std::cerr << "qpo test: " << p << "\n";
    if (cases.empty()) {
      std::cerr << "qpo test: no scenarios to run\n";
      return static_cast<int>(kSystemError);
    }
    // Each case's qpo run writes its JSON result here: figures, baselines (removed at the end,
    // unless they are the user's --results).
    if (!opts->results.empty()) {
      // Its files are removed before the cases run: never a baseline folder's.
      for (const auto* other : {&opts->baseline, &opts->save_baseline})
        if (!other->empty() && same_folder(*other, opts->results)) {
          std::cerr << "qpo test: --results " << util::printable(opts->results, 1000)
                    << " is the baselines' folder too: name a folder of its own\n";
          return static_cast<int>(kSystemError);
        }
      std::error_code ec;
      std::filesystem::create_directories(opts->results, ec);
      if (ec) {
        std::cerr << "qpo test: --results " << util::printable(opts->results, 1000) << ": " << ec.message() << "\n";
        return static_cast<int>(kSystemError);
      }
      o.results_dir = opts->results;
      o.keep_results = true;
      baseline::name_results(cases, o.results_dir);
    } else {
      char tmp[] = "/tmp/qpo-test-XXXXXX";
      if (mkdtemp(tmp)) o.results_dir = tmp;
    }
    std::vector<baseline::CaseBaseline> compared;
    if (invalid) {
      if (o.tap) std::printf("TAP version 13\n1..%zu\n", cases.size());
      for (size_t i = 0; i < cases.size(); ++i)
        if (cases[i].outcome == "fail" || o.tap) suite::print_case(cases[i], i + 1, o);
    } else {
      suite::run_all(cases, o);
      for (auto& c : cases) baseline::add_properties(c);
      if (!opts->baseline.empty()) {
        compared = baseline::compare_with(cases, opts->baseline, *tolerance);
        std::cout << baseline::render_text(cases, compared);
      }
      if (!opts->save_baseline.empty()) {
        std::vector<std::string> errors;
        size_t n = baseline::save(cases, opts->save_baseline, &errors);
        for (const auto& e : errors) std::cerr << "qpo test: --save-baseline: " << util::printable(e) << "\n";
        std::cout << "saved " << n << " baseline" << (n == 1 ? "" : "s") << " in " << util::printable(opts->save_baseline, 1000) << "\n";
      }
    }
    if (!opts->json.empty()) {
      write_report_file(opts->json, baseline::suite_json(cases, compared, o.keep_results, opts->overrides) + "\n", "--json");
    }
    int passed = 0, failed = 0, skipped = 0;
    for (const auto& c : cases) {
      passed += c.outcome == "pass";
      skipped += c.outcome == "skip";
      failed += c.outcome == "fail" || c.outcome == "error";
    }
    if (!opts->junit.empty()) {
      write_report_file(opts->junit, suite::junit_xml(cases, "qpo"), "--junit");
    }
    if (!opts->report.empty() && !write_suite_report(opts->report, cases)) failed += !failed;
    if (!o.results_dir.empty() && !o.keep_results) std::filesystem::remove_all(o.results_dir);
    std::printf("%s%d passed, %d failed, %d skipped\n", o.tap ? "# " : "", passed, failed, skipped);
    return failed ? static_cast<int>(kInvalid) : static_cast<int>(kOk);
  };
}

}  // namespace qpo::cli
