#include "lua/isolate.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

namespace qpo::lua {

namespace {

constexpr size_t kMaxAnswer = 64 << 10;
// The hook fires at the limit; this much later the child is killed from outside.
constexpr std::chrono::milliseconds kGrace{3000};

void write_all(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = ::write(fd, s.data() + off, s.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    off += static_cast<size_t>(n);
  }
}

std::string seconds(std::chrono::milliseconds ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g s", static_cast<double>(ms.count()) / 1000);
  return buf;
}

}  // namespace

std::string run_isolated(const std::function<std::string()>& body, std::chrono::milliseconds limit,
                         const std::string& what) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return what + ": cannot create a pipe for the check: " + std::strerror(errno);
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  pid_t pid = ::fork();
  if (pid < 0) {
    int e = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    return what + ": cannot fork for the check: " + std::strerror(e);
  }
  if (pid == 0) {
    ::close(fds[0]);
    ::dup2(2, 1);
    std::string answer;
    try {
      answer = body();
    } catch (const std::exception& e) {
      answer = e.what();
    }
    if (answer.size() > kMaxAnswer) answer.resize(kMaxAnswer);
    write_all(fds[1], "A" + answer);  // "A": the child got as far as answering
    std::fflush(nullptr);
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string got;
  bool late = false;
  auto deadline = std::chrono::steady_clock::now() + limit + kGrace;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      late = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    int r = ::poll(&p, 1, static_cast<int>(left.count()));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;  // the loop head sees the deadline
    char buf[4096];
    ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (got.size() < kMaxAnswer + 1) got.append(buf, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  if (late) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (late)
    return what + " did not finish within " + seconds(limit) +
           " (stopped from outside: it was busy where the time limit cannot look, e.g. a long "
           "string.find/gsub pattern match, a sleep, or a finalizer)";
  if (WIFSIGNALED(status)) return what + ": the check crashed (signal " + std::to_string(WTERMSIG(status)) + ")";
  if (got.empty() || got[0] != 'A') return what + ": the check ended without an answer";
  return got.substr(1);
}

}  // namespace qpo::lua
