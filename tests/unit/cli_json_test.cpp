// --format json on an invalid scenario: plan and run print the diagnostics on stdout in the
// shape `qpo validate --format json` prints them, and exit 1. The commands run in-process.
#include <doctest/doctest.h>

#include <algorithm>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.h"

namespace {

struct CliOutcome {
  int exit_code = -1;
  std::string out, err;
};

// Parses `args` (without the program name) as qpo does and runs the one subcommand.
CliOutcome run_qpo(std::vector<std::string> args) {
  CLI::App app{"qpo", "qpo"};
  std::vector<std::pair<std::string, qpo::cli::Action>> actions{{"validate", qpo::cli::add_validate(app)},
                                                                {"plan", qpo::cli::add_plan(app)},
                                                                {"run", qpo::cli::add_run(app)}};
  std::reverse(args.begin(), args.end());  // CLI11 takes a vector in reverse order
  app.parse(args);
  std::ostringstream out, err;
  auto* old_out = std::cout.rdbuf(out.rdbuf());
  auto* old_err = std::cerr.rdbuf(err.rdbuf());
  CliOutcome o;
  for (auto& [name, action] : actions)
    if (app.got_subcommand(name)) o.exit_code = action();
  std::cout.rdbuf(old_out);
  std::cerr.rdbuf(old_err);
  o.out = out.str();
  o.err = err.str();
  return o;
}

const std::string kBad = std::string(QPO_SOURCE_DIR) + "/tests/scenarios/bad/q301-skip-rtr.yaml";

}  // namespace

TEST_CASE("qpo validate --format json on an invalid file lists its diagnostics on stdout, exit 1") {
  auto v = run_qpo({"validate", "--format", "json", kBad});
  CHECK(v.exit_code == 1);
  CHECK(v.out.rfind("{", 0) == 0);
  CHECK(v.out.find("\"code\": \"Q301\"") != std::string::npos);
  CHECK(v.out.find("\"valid\": false") != std::string::npos);
}

TEST_CASE("qpo plan --format json on an invalid file prints validate's JSON on stdout, exit 1") {
  auto v = run_qpo({"validate", "--format", "json", kBad});
  auto p = run_qpo({"plan", "--format", "json", kBad});
  CHECK(p.exit_code == 1);
  CHECK(p.out == v.out);
}

TEST_CASE("qpo run --format json on an invalid file prints validate's JSON on stdout, exit 1") {
  auto v = run_qpo({"validate", "--format", "json", kBad});
  auto r = run_qpo({"run", "--format", "json", kBad});
  CHECK(r.exit_code == 1);
  CHECK(r.out == v.out);
}

TEST_CASE("qpo plan in text format on an invalid file keeps stdout empty: diagnostics go to stderr") {
  auto p = run_qpo({"plan", kBad});
  CHECK(p.exit_code == 1);
  CHECK(p.out.empty());
  CHECK(p.err.find("error[Q301]") != std::string::npos);
}

TEST_CASE("qpo plan --format json on a missing file prints the read error as JSON, exit 2") {
  auto p = run_qpo({"plan", "--format", "json", "/nonexistent/qpo-no-such-file.yaml"});
  CHECK(p.exit_code == 2);
  CHECK(p.out.find("\"error\": \"cannot read /nonexistent/qpo-no-such-file.yaml: No such file or directory\"") !=
        std::string::npos);
  CHECK(p.out.find("\"valid\": false") != std::string::npos);
}
