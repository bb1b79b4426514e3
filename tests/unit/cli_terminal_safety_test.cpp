// What the command line and a script hand qpo reaches the terminal printable: a provider name
// or file, --tolerance, a path, a rules filter, a Lua report()'s text (issue 30 item 14).
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "report/workload_render.h"
#include "scenario_fixture.h"

namespace {

constexpr const char* kEscape = "\x1b]0;TITLE\a\x1b[2J";
constexpr const char* kShown = "\\x1B]0;TITLE\\x07\\x1B[2J";

// Runs the qpo binary with `args` (no shell: the bytes arrive as written); stdout and stderr together.
std::string run_qpo(const std::vector<std::string>& args) {
  int out[2];
  REQUIRE(pipe(out) == 0);
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    dup2(out[1], 1);
    dup2(out[1], 2);
    ::close(out[0]);
    std::vector<char*> argv{const_cast<char*>(QPO_BINARY)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(QPO_BINARY, argv.data());
    _exit(127);
  }
  ::close(out[1]);
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = ::read(out[0], buf, sizeof buf)) > 0;) text.append(buf, static_cast<size_t>(n));
  ::close(out[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return text;
}

std::string scenario_file() {
  std::string path = "/tmp/qpo-cli-terminal-" + std::to_string(getpid()) + ".yaml";
  std::ofstream(path) << qpo::test::rc_pair();
  return path;
}

void check_printable(const std::string& out, const std::string& expected) {
  CHECK_MESSAGE(out.find('\x1b') == std::string::npos, out);
  CHECK_MESSAGE(out.find('\a') == std::string::npos, out);
  CHECK_MESSAGE(out.find(expected) != std::string::npos, out);
}

}  // namespace

TEST_CASE("qpo validate --provider with an unknown name shows the name printable") {
  auto file = scenario_file();
  auto out = run_qpo({"validate", "--provider", std::string("rx") + kEscape, file});
  check_printable(out, std::string("qpo: --provider: no provider 'rx") + kShown + "' in schemas/providers.yaml");
  std::remove(file.c_str());
}

TEST_CASE("qpo validate --provider with a missing file shows the path printable") {
  auto file = scenario_file();
  auto out = run_qpo({"validate", "--provider", std::string("/tmp/nope") + kEscape + ".yaml", file});
  check_printable(out, std::string("cannot read provider file /tmp/nope") + kShown + ".yaml: no such file");
  std::remove(file.c_str());
}

TEST_CASE("qpo validate --provider FILE:NAME lists the file's provider names printable") {
  auto file = scenario_file();
  std::string providers = "/tmp/qpo-cli-terminal-providers-" + std::to_string(getpid()) + ".yaml";
  std::ofstream(providers) << "providers:\n  \"ev" << "\\e]0;TITLE\\a\\e[2J" << "il\": {}\n  other: {}\n";
  auto out = run_qpo({"validate", "--provider", providers + ":zz", file});
  check_printable(out, std::string("(ev") + kShown + "il, other)");
  std::remove(providers.c_str());
  std::remove(file.c_str());
}

TEST_CASE("qpo compare and qpo test show a bad --tolerance printable") {
  auto compare = run_qpo({"compare", "--tolerance", std::string("5") + kEscape, "/tmp/a.json", "/tmp/b.json"});
  check_printable(compare, std::string("qpo compare: --tolerance 5") + kShown + ": expected a percentage");
  auto test = run_qpo({"test", "--tolerance", std::string("5") + kEscape, "/tmp/qpo-no-such-dir"});
  check_printable(test, std::string("qpo test: --tolerance 5") + kShown + ": expected a percentage");
}

TEST_CASE("qpo validate and qpo plan show a path printable") {
  std::string missing = std::string("/tmp/qpo-no-such-") + kEscape + ".yaml";
  check_printable(run_qpo({"validate", missing}), std::string("/tmp/qpo-no-such-") + kShown + ".yaml");
  std::string bad = "/tmp/qpo-cli-terminal-" + std::to_string(getpid()) + kEscape + ".yaml";
  std::ofstream(bad) << "version: 1\nqps: { q: { pd: nowhere, type: RC } }\n";
  check_printable(run_qpo({"plan", bad}), "qpo-cli-terminal-" + std::to_string(getpid()) + kShown + ".yaml: invalid; ");
  check_printable(run_qpo({"validate", bad}), "qpo-cli-terminal-" + std::to_string(getpid()) + kShown + ".yaml: invalid");
  std::remove(bad.c_str());
}

TEST_CASE("qpo rules show echoes an unknown type or state printable") {
  check_printable(run_qpo({"rules", "show", "--type", std::string("R") + kEscape}),
                  std::string("unknown QP type 'R") + kShown + "'");
  check_printable(run_qpo({"rules", "show", "--from", std::string("I") + kEscape}),
                  std::string("unknown state 'I") + kShown + "'");
}

TEST_CASE("a script's report() text, summary strings and keys reach the text log printable") {
  qpo::report::WorkloadResult w;
  w.table = std::string("#bytes ") + kEscape + "\nsecond line";
  std::string text = qpo::report::render_workload_text(w, "  ");
  CHECK(text.find('\x1b') == std::string::npos);
  CHECK(text.find(std::string("  #bytes ") + kShown + "\n  second line\n") != std::string::npos);

  qpo::report::WorkloadResult plain;
  plain.summary.emplace_back(std::string("k") + kEscape, qpo::report::Scalar(std::string("v") + kEscape));
  std::string line = qpo::report::render_workload_text(plain, "");
  CHECK(line == std::string("k") + kShown + " v" + kShown + "\n");
}
