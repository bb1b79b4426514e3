// Inputs on which yaml-cpp 0.7's YAML::LoadAll never returns (jbeder/yaml-cpp#1040): it appends
// a null document per call without consuming the stray token, until memory runs out (a file
// that is just "," took `qpo validate` to 23 GB before the OOM killer; found by fuzz_scenario
// in CI). The loader counts documents itself and stops when the parser stops advancing.
//
// The real `qpo validate` runs as a child with a memory cap and a deadline, so a regression
// fails this test instead of taking the machine down: RLIMIT_AS in plain builds, ASan's
// hard_rss_limit_mb in sanitized ones (ASan reserves terabytes of address space up front).
#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "unit/sanitizer_build.h"

namespace {

struct Outcome {
  int exit_code = -1;  // -1: killed (signal or deadline)
  bool timed_out = false;
  std::string err;
};

Outcome validate_capped(const std::string& text) {
  auto dir = std::filesystem::temp_directory_path();
  std::string file = (dir / ("qpo-yaml-stream-" + std::to_string(getpid()) + ".yaml")).string();
  std::string errf = file + ".err";
  std::ofstream(file, std::ios::binary) << text;
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    int null = open("/dev/null", O_RDWR);
    int err = open(errf.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(null, 0);
    dup2(null, 1);
    dup2(err, 2);
#ifdef QPO_TEST_ASAN
    const char* old = std::getenv("ASAN_OPTIONS");
    std::string opts = std::string(old ? old : "") + ":hard_rss_limit_mb=1024";
    setenv("ASAN_OPTIONS", opts.c_str(), 1);
#else
    rlimit cap{1ul << 30, 1ul << 30};
    setrlimit(RLIMIT_AS, &cap);
#endif
    execl(QPO_BINARY, QPO_BINARY, "validate", file.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  Outcome o;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      o.timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (!o.timed_out && WIFEXITED(status)) o.exit_code = WEXITSTATUS(status);
  std::ifstream in(errf);
  o.err.assign(std::istreambuf_iterator<char>(in), {});
  std::filesystem::remove(file);
  std::filesystem::remove(errf);
  return o;
}

}  // namespace

TEST_CASE("a stray ',' at the top level is Q100 at once, not a loop that eats memory") {
  for (const char* text : {",", ",\n", "\n\n  ,\n", "---\n,\n", "[a, b]\n,\n"}) {
    CAPTURE(text);
    auto o = validate_capped(text);
    CHECK_FALSE(o.timed_out);
    CHECK(o.exit_code == 1);
    CHECK(o.err.find("error[Q100]") != std::string::npos);
    CHECK(o.err.find("bad_alloc") == std::string::npos);
    CHECK(o.err.find("Sanitizer") == std::string::npos);
  }
}

TEST_CASE("the document count still refuses two documents, and an empty file is one empty scenario") {
  auto two = validate_capped("version: 1\n---\nversion: 1\n");
  CHECK(two.exit_code == 1);
  CHECK(two.err.find("the file holds 2 YAML documents; a scenario is one") != std::string::npos);
  CHECK(two.err.find(":2:1") != std::string::npos);  // at the second document's '---'
  auto empty = validate_capped("");
  CHECK(empty.exit_code == 1);
  CHECK(empty.err.find("error[Q102]") != std::string::npos);
}
