#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>

#include "suite/suite.h"
#include "util/strings.h"

namespace qpo::suite {

namespace {

using Clock = std::chrono::steady_clock;

struct Child {
  size_t index = 0;
  pid_t pid = -1;
  int out = -1;
  Clock::time_point start, interrupted_at;
  bool interrupted = false, killed = false;
};

Child start(const Case& c, size_t index, const Options& o) {
  Child ch;
  ch.index = index;
  ch.start = Clock::now();
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return ch;
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], 1);
    dup2(fds[1], 2);
    // Its own process group: a timeout interrupts the case and nothing else.
    setpgid(0, 0);
    std::vector<std::string> args{o.qpo, "run"};
    args.insert(args.end(), o.run_args.begin(), o.run_args.end());
    for (const auto& ov : c.overrides) args.insert(args.end(), {"--set", ov});
    if (!c.results.empty()) args.insert(args.end(), {"--results", c.results});
    // Its other side is a stock tool the suite does not start: once valid, the run says so and
    // exits 77 (a skip); an invalid one still fails as invalid.
    if (!c.external.empty()) args.push_back("--skip-externals");
    args.push_back(c.file);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(fds[1]);
  ch.pid = pid;
  ch.out = fds[0];
  return ch;
}

// The reason a run gives for its verdict: its last non-empty line ("FAIL x: why").
std::string last_line(const std::string& out) {
  size_t end = out.find_last_not_of("\n ");
  if (end == std::string::npos) return "";
  size_t start = out.rfind('\n', end);
  return out.substr(start == std::string::npos ? 0 : start + 1, end - (start == std::string::npos ? 0 : start + 1) + 1);
}

std::string first_matching(const std::string& out, const char* prefix) {
  size_t p = out.find(prefix);
  if (p == std::string::npos) return "";
  size_t e = out.find('\n', p);
  return out.substr(p, e == std::string::npos ? std::string::npos : e - p);
}

void classify(Case& c, int status, bool timed_out, int timeout_s) {
  std::string verdict = last_line(c.output);
  auto after_colon = [&](const std::string& s) {
    auto p = s.find(": ");
    return p == std::string::npos ? s : s.substr(p + 2);
  };
  if (timed_out) {
    c.outcome = "fail";
    c.reason = "timed out after " + std::to_string(timeout_s) + " s (interrupted, torn down)";
    return;
  }
  if (WIFSIGNALED(status)) {
    c.outcome = "error";
    c.reason = "qpo run killed by signal " + std::to_string(WTERMSIG(status));
    return;
  }
  int code = WEXITSTATUS(status);
  if (code == 0) {
    c.outcome = "pass";
  } else if (code == 77) {
    c.outcome = "skip";
    c.reason = after_colon(verdict);
  } else if (code == 1) {
    c.outcome = "fail";
    std::string diag = first_matching(c.output, "error[");
    c.reason = verdict.rfind("FAIL", 0) == 0 ? after_colon(verdict) : diag.empty() ? verdict : "invalid: " + diag;
  } else {
    c.outcome = "error";
    c.reason = verdict.empty() ? "qpo run exited " + std::to_string(code) : verdict;
  }
}


}  // namespace

void print_case(const Case& c, size_t number, const Options& o) {
  // Names and reasons come from scenario files and device output: one printable line each, so
  // a name with a newline cannot forge an "ok" line and an escape sequence reaches no terminal.
  std::string name = util::printable(c.name, 200), reason = util::printable(c.reason, 2000);
  std::string file = util::printable(c.file, 1000);
  if (o.tap) {
    if (c.outcome == "pass") std::printf("ok %zu - %s\n", number, name.c_str());
    else if (c.outcome == "skip") std::printf("ok %zu - %s # SKIP %s\n", number, name.c_str(), reason.c_str());
    else {
      std::printf("not ok %zu - %s\n", number, name.c_str());
      std::printf("  ---\n  message: \"%s\"\n  file: \"%s\"\n  ...\n", reason.c_str(), file.c_str());
    }
  } else {
    const char* tag = c.outcome == "pass" ? "ok  " : c.outcome == "skip" ? "skip" : "FAIL";
    std::printf("%s %-34s %6.1f s", tag, name.c_str(), c.seconds);
    if (!reason.empty()) std::printf("  %s", reason.c_str());
    std::printf("\n");
  }
  std::fflush(stdout);
}

void run_all(std::vector<Case>& cases, const Options& o) {
  if (o.tap) std::printf("TAP version 13\n1..%zu\n", cases.size());
  std::vector<Child> running;
  size_t next = 0, finished = 0;
  int jobs = std::max(1, o.jobs);
  // Cases named by the caller (qpo test --results) keep their names.
  if (!o.results_dir.empty())
    for (size_t i = 0; i < cases.size(); ++i)
      if (cases[i].results.empty()) cases[i].results = o.results_dir + "/case-" + std::to_string(i) + ".json";
  while (finished < cases.size()) {
    while (static_cast<int>(running.size()) < jobs && next < cases.size()) {
      running.push_back(start(cases[next], next, o));
      ++next;
    }
    std::vector<pollfd> fds;
    for (auto& ch : running) fds.push_back({ch.out, POLLIN, 0});
    poll(fds.data(), fds.size(), 200);
    for (size_t i = 0; i < running.size();) {
      auto& ch = running[i];
      auto& c = cases[ch.index];
      char buf[65536];
      bool eof = false;
      if (fds[i].revents & (POLLIN | POLLHUP)) {
        ssize_t n = read(ch.out, buf, sizeof buf);
        if (n > 0) c.output.append(buf, static_cast<size_t>(n));
        else eof = true;
      }
      auto age = Clock::now() - ch.start;
      // Timeout: SIGINT first so the case tears its verbs objects down, SIGKILL if it will not.
      if (!ch.interrupted && age > std::chrono::seconds(o.timeout_s)) {
        kill(-ch.pid, SIGINT);
        ch.interrupted = true;
        ch.interrupted_at = Clock::now();
      }
      if (ch.interrupted && !ch.killed && Clock::now() - ch.interrupted_at > std::chrono::seconds(15)) {
        kill(-ch.pid, SIGKILL);
        ch.killed = true;
      }
      if (!eof) {
        ++i;
        continue;
      }
      int status = 0;
      waitpid(ch.pid, &status, 0);
      close(ch.out);
      c.seconds = std::chrono::duration<double>(Clock::now() - ch.start).count();
      classify(c, status, ch.interrupted, o.timeout_s);
      print_case(c, ch.index + 1, o);
      ++finished;
      running.erase(running.begin() + static_cast<long>(i));
      fds.erase(fds.begin() + static_cast<long>(i));
    }
  }
}

}  // namespace qpo::suite
