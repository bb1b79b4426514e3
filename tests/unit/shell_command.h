#pragma once
// Runs a shell command line (a qpo command, as a user would type it) and keeps its exit code
// and its stdout and stderr together, for tests that check what qpo prints and returns.
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace qpo::test {

struct CommandOutcome {
  int exit_code = -1;  // -1: ended by a signal
  std::string output;  // stdout and stderr, as the command line redirects them
};

inline CommandOutcome run_command(const std::string& command_line) {
  CommandOutcome o;
  FILE* p = popen(command_line.c_str(), "r");
  REQUIRE(p);
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) o.output.append(buf, n);
  int status = pclose(p);
  o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return o;
}

}  // namespace qpo::test
