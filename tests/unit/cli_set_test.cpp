// `--set` through the qpo binary: parsed as a repeatable option next to the file argument,
// applied before validation, and a bad value named by its flag in the diagnostic.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "shell_command.h"
#include "cli/input.h"
#include "scenario_fixture.h"

namespace {

using Outcome = qpo::test::CommandOutcome;

Outcome run_shell(const std::string& args) {
  std::string cmd = std::string(QPO_BINARY) + " " + args + " 2>&1";
  return qpo::test::run_command(cmd);
}

// The fixture's RC pair, written to a file of its own for the binary to read.
std::string pair_file() {
  std::string path = "/tmp/qpo-cli-set-" + std::to_string(getpid()) + ".yaml";
  std::ofstream(path) << qpo::test::rc_pair();
  return path;
}

}  // namespace

TEST_CASE("qpo validate --set with a good value: valid, exit 0") {
  auto file = pair_file();
  auto o = run_shell("validate --set qps.qa.states.RTR.path_mtu=1024 --set qps.qb.cap.max_send_wr=16 " + file);
  CHECK_MESSAGE(o.exit_code == 0, o.output);
  CHECK(o.output == file + ": valid\n");
  std::remove(file.c_str());
}

TEST_CASE("qpo validate --set with a bad value: the diagnostic names the flag, exit 1") {
  auto file = pair_file();
  auto o = run_shell("validate --set qps.qa.states.RTR.path_mtu=999 " + file);
  CHECK(o.exit_code == 1);
  CHECK_MESSAGE(o.output.find("error[Q401]: path_mtu = 999 is outside 1..5\n"
                              "  --> --set qps.qa.states.RTR.path_mtu=999  (qps.qa.states.RTR.path_mtu)\n") !=
                    std::string::npos,
                o.output);
  std::remove(file.c_str());
}

TEST_CASE("qpo plan --set: the plan carries the overridden value") {
  auto file = pair_file();
  auto o = run_shell("plan --set qps.qa.states.RTR.path_mtu=2048 " + file);
  CHECK_MESSAGE(o.exit_code == 0, o.output);
  CHECK(o.output.find("path_mtu=IBV_MTU_2048") != std::string::npos);
  std::remove(file.c_str());
}

// Issue 30 item 17: a --set count that no longer matches the peer group's reported the pair
// twice and every member past the smaller count as a dangling reference (15 errors).
TEST_CASE("--set qps.cli.count=4 on rc-many-qps is one Q502 for the pair, not a Q201 per member") {
  auto l = qpo::cli::load_and_validate(QPO_SOURCE_DIR "/scenarios/rc-many-qps.yaml", {"qps.cli.count=4"});
  size_t q502 = 0, q201 = 0;
  for (const auto& d : l->diags.all()) {
    q502 += d.code == "Q502";
    q201 += d.code == "Q201";
  }
  CHECK(q502 == 1);
  CHECK(q201 == 0);
}

TEST_CASE("--set qps.cli.count=4: the count mismatch points at the flag, and the MR group's Q213 names it") {
  auto l = qpo::cli::load_and_validate(QPO_SOURCE_DIR "/scenarios/rc-many-qps.yaml", {"qps.cli.count=4"});
  const qpo::diag::Diagnostic* q502 = nullptr;
  const qpo::diag::Diagnostic* q213 = nullptr;
  for (const auto& d : l->diags.all()) {
    if (d.code == "Q502") q502 = &d;
    if (d.code == "Q213") q213 = &d;
  }
  REQUIRE(q502);
  CHECK(std::string(q502->loc.file) == "--set qps.cli.count=4");
  CHECK(q502->path == "qps.cli.count");
  CHECK(q502->message == "'cli' has count 4 but its peer 'srv' has count 16");
  REQUIRE(q213);
  CHECK(q213->message.find("QP group 'cli' has 4 QPs (count set by --set qps.cli.count=4): the counts must match") !=
        std::string::npos);
}

TEST_CASE("--set on the peer's count (srv) points the mismatch at that flag") {
  auto l = qpo::cli::load_and_validate(QPO_SOURCE_DIR "/scenarios/rc-many-qps.yaml", {"qps.srv.count=8"});
  const qpo::diag::Diagnostic* q502 = nullptr;
  for (const auto& d : l->diags.all())
    if (d.code == "Q502") q502 = &d;
  REQUIRE(q502);
  CHECK(std::string(q502->loc.file) == "--set qps.srv.count=8");
  CHECK(q502->path == "qps.srv.count");
}
