// Timeout flags hold 1 to their maximum, or qpo says so and exits 2 (issue 30 item 15: the
// seconds were multiplied into an int of milliseconds, so --reply-timeout 4294968 became 704 ms,
// and 0 or a negative value was taken).
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace {

struct Outcome {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// qpo ARGS, its output through a file of this test's own.
Outcome run_qpo(const std::string& args) {
  std::string file = "/tmp/qpo-cli-timeouts-" + std::to_string(getpid());
  int status = std::system((std::string(QPO_BINARY) + " " + args + " >" + file + " 2>&1 </dev/null").c_str());
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  std::remove(file.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, text.str()};
}

}  // namespace

TEST_CASE("qpo agent --reply-timeout past what milliseconds in an int hold, zero or negative is a usage error") {
  for (const char* value : {"4294968", "0", "-5"}) {
    CAPTURE(value);
    auto o = run_qpo(std::string("agent --stdio --reply-timeout=") + value);
    CHECK(o.exit_code == 2);
    CHECK(o.output.find(std::string("--reply-timeout: ") + value + " is out of range; give 1 to 2147483 seconds") !=
          std::string::npos);
  }
}

TEST_CASE("qpo agent --reply-timeout that is not a whole number is a usage error naming the range") {
  auto o = run_qpo("agent --stdio --reply-timeout=1.5");
  CHECK(o.exit_code == 2);
  CHECK(o.output.find("--reply-timeout: '1.5' is not a whole number; give 1 to 2147483 seconds") != std::string::npos);
}

TEST_CASE("qpo run --phase-timeout and --timeout-ms out of range are usage errors before the file is read") {
  auto o = run_qpo("run --phase-timeout=2147484 /nonexistent.yaml");
  CHECK(o.exit_code == 2);
  CHECK(o.output.find("--phase-timeout: 2147484 is out of range; give 1 to 2147483 seconds") != std::string::npos);
  o = run_qpo("run --timeout-ms=-1 /nonexistent.yaml");
  CHECK(o.exit_code == 2);
  CHECK(o.output.find("--timeout-ms: -1 is out of range; give 1 to 86400000 milliseconds") != std::string::npos);
}

TEST_CASE("qpo test --timeout out of range is a usage error") {
  auto o = run_qpo("test --timeout=0 /nonexistent");
  CHECK(o.exit_code == 2);
  CHECK(o.output.find("--timeout: 0 is out of range; give 1 to 2147483 seconds") != std::string::npos);
}
