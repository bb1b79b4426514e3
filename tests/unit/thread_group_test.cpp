// util::ThreadGroup: no exception leaves a thread, a thread that cannot start is reported, and
// every started thread is joined (issue 31 item 7: "terminate called" from a worker thread).
#include <doctest/doctest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

#include "util/thread_group.h"

#include "unit/sanitizer_build.h"

using qpo::util::ThreadGroup;

TEST_CASE("an exception out of a thread's body is kept, not std::terminate") {
  ThreadGroup g;
  CHECK(!g.start([] { throw std::runtime_error("lane 3 lost its peer"); }));
  g.join();
  CHECK(g.escaped() == "lane 3 lost its peer");
}

TEST_CASE("the group joins every thread it started when it goes") {
  std::atomic<int> ran{0};
  {
    ThreadGroup g;
    for (int i = 0; i < 4; ++i) CHECK(!g.start([&] { ++ran; }));
  }
  CHECK(ran == 4);
}

TEST_CASE("a body that throws something that is not a std::exception is kept too") {
  ThreadGroup g;
  CHECK(!g.start([] { throw 42; }));
  g.join();
  CHECK(g.escaped() == "an exception that is not a std::exception");
}

#ifndef QPO_TEST_ASAN  // ASan reserves terabytes of address space: RLIMIT_AS cannot bound it
// Under an address-space limit a new thread's stack cannot be mapped: std::thread throws
// std::system_error, which used to leave the caller with joinable threads (std::terminate).
TEST_CASE("a thread that cannot be started is reported by start(), and its body does not run") {
  pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    long pages = 0;
    std::ifstream("/proc/self/statm") >> pages;
    rlimit lim{};
    lim.rlim_cur = lim.rlim_max = static_cast<rlim_t>(pages) * static_cast<rlim_t>(sysconf(_SC_PAGESIZE)) + (1 << 20);
    setrlimit(RLIMIT_AS, &lim);
    // glibc reuses the stacks of threads that ended (earlier tests made some): keep every
    // started thread busy so that the next needs a new stack, until one cannot have it.
    std::atomic<bool> release{false};
    std::atomic<int> ran{0};
    int started = 0;
    std::optional<std::string> why;
    {
      ThreadGroup g;
      for (int i = 0; i < 64 && !why; ++i) {
        why = g.start([&] {
          ++ran;
          while (!release) std::this_thread::yield();
        });
        if (!why) ++started;
      }
      release = true;
    }
    _exit(why && why->rfind("cannot start a thread", 0) == 0 && ran == started ? 0 : 1);
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  INFO("wait status " << status);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}
#endif
