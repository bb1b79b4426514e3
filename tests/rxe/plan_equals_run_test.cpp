// The plan is the program, as a user sees it: for every example scenario, every scenario of
// the regression suite and a few runs that fail on purpose, `qpo plan --format json FILE` and
// the run's JSON report, read back with qpo's own JSON reader. Each host's report lines walk
// its plan's steps in order, one step after the other, each step reporting at least one line
// and no line reporting on anything else. A run that stops early (unsupported, a failure) walks
// every step too: the ones after where it stopped report "not run" (and teardown's with nothing
// to release); a failed run's steps not run start right after its failed step. Each run's
// verdict and exit status are asserted.
//
// The examples and the regression suite are run once in CI, by rxe_qpo_test_suite and
// rxe_regression_suite (`qpo test --local --results DIR --json FILE` in the lab: every case's
// report kept); the test cases for them read those reports (QPO_LAB_RESULTS) and plan on the
// host. The failing runs are run here, inside the lab guest (a real rxe device):
// `qpo run --no-lab --local --format json`, every host in its process.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "util/json_reader.h"

extern char** environ;

namespace fs = std::filesystem;
namespace json = qpo::util::json;

namespace {

std::vector<std::string> scenario_files(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".yaml") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

struct Child {
  int exit_code = -1;  // -1: ended by a signal
  int signal = 0;
  std::string out, err;
};

std::string read_all(int fd) {
  std::string s;
  char buf[65536];
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) != 0;) {
    if (n > 0) s.append(buf, static_cast<size_t>(n));
    else if (errno != EINTR) break;
  }
  return s;
}

// A qpo child started with `args`, no shell between: stdout through a pipe, stderr into a
// temporary file (read after the exit, so a child writing much to both never blocks on either).
struct Started {
  pid_t pid = 0;
  int rc = 0;  // posix_spawn's
  int out = -1, err_fd = -1;
};

Started start_qpo(const std::vector<std::string>& args) {
  std::vector<std::string> argv_text{QPO_BINARY};
  argv_text.insert(argv_text.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_text) argv.push_back(a.data());
  argv.push_back(nullptr);
  int out[2];
  REQUIRE(pipe2(out, O_CLOEXEC) == 0);
  char err_path[] = "/tmp/plan-equals-run.XXXXXX";
  int err_fd = mkstemp(err_path);
  REQUIRE(err_fd >= 0);
  unlink(err_path);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err_fd, 2);
  Started s;
  s.rc = posix_spawn(&s.pid, argv[0], &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  close(out[1]);
  s.out = out[0];
  s.err_fd = err_fd;
  return s;
}

// Reads the child's output, waits for it, closes its files.
Child finish(const Started& s) {
  Child c;
  if (s.rc == 0) {
    c.out = read_all(s.out);
    int status = 0;
    while (waitpid(s.pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(status)) c.exit_code = WEXITSTATUS(status);
    else if (WIFSIGNALED(status)) c.signal = WTERMSIG(status);
    lseek(s.err_fd, 0, SEEK_SET);
    c.err = read_all(s.err_fd);
  }
  close(s.out);
  close(s.err_fd);
  REQUIRE_MESSAGE(s.rc == 0, "posix_spawn(" << QPO_BINARY << ") failed: errno " << s.rc);
  return c;
}

// The last lines of what a child printed on stderr, for a failure message.
std::string tail(const std::string& s, size_t max = 2000) { return s.size() <= max ? s : "..." + s.substr(s.size() - max); }

struct JsonOutput {
  json::Value value;
  int exit_code = 0;
};

// qpo with `args` (child `c`) must have exited with one of `codes` and printed one JSON object.
JsonOutput qpo_json(const std::vector<std::string>& args, const Child& c, const std::set<int>& codes) {
  std::string command = "qpo";
  for (const auto& a : args) command += " " + a;
  INFO(command);
  INFO("stderr: " << tail(c.err));
  REQUIRE_MESSAGE(c.signal == 0, "ended by signal " << c.signal);
  REQUIRE_MESSAGE(codes.count(c.exit_code), "exit status " << c.exit_code);
  std::string error;
  auto v = json::parse(c.out, &error);
  REQUIRE_MESSAGE(v, "stdout is not JSON: " << error);
  REQUIRE(v->is(json::Kind::Object));
  return {std::move(*v), c.exit_code};
}

const json::Value& member(const json::Value& v, const char* key, json::Kind kind) {
  const auto* m = v.find(key);
  REQUIRE_MESSAGE(m, "no '" << key << "' at line " << v.line);
  REQUIRE_MESSAGE(m->is(kind), "'" << key << "' is " << json::kind_name(m->kind) << ", not " << json::kind_name(kind));
  return *m;
}

const std::string& text_of(const json::Value& v, const char* key) { return member(v, key, json::Kind::String).text; }
int int_of(const json::Value& v, const char* key) { return static_cast<int>(member(v, key, json::Kind::Number).number); }

// A host's steps in the plan JSON: every index, and the ones before teardown.
struct PlanSteps {
  std::vector<int> all, before_teardown;
};

PlanSteps plan_steps(const json::Value& host) {
  PlanSteps p;
  for (const auto& st : member(host, "steps", json::Kind::Array).items) {
    p.all.push_back(int_of(st, "index"));
    if (text_of(st, "phase") != "teardown") p.before_teardown.push_back(p.all.back());
  }
  return p;
}

// The plan steps each of the run JSON's lines reports on, for one host, with repeats folded.
std::vector<int> walked(const json::Value& run, const std::string& host) {
  std::vector<int> out;
  for (const auto& s : member(run, "steps", json::Kind::Array).items) {
    int step = int_of(s, "step");
    if (text_of(s, "host") == host && (out.empty() || out.back() != step)) out.push_back(step);
  }
  return out;
}

// The plan steps of `host` whose every line says "not run", in report order.
std::vector<int> not_run(const json::Value& run, const std::string& host) {
  std::map<int, bool> all_not_run;
  std::vector<int> order;
  for (const auto& s : member(run, "steps", json::Kind::Array).items) {
    if (text_of(s, "host") != host) continue;
    int step = int_of(s, "step");
    bool unrun = text_of(s, "status") == "not run";
    auto [it, fresh] = all_not_run.emplace(step, unrun);
    if (fresh) order.push_back(step);
    else it->second = it->second && unrun;
  }
  std::vector<int> out;
  for (int step : order)
    if (all_not_run[step]) out.push_back(step);
  return out;
}

// What one lab guest's rxe0 cannot do, by scenario: RAW_PACKET and XRC QPs, completion
// timestamps, and rdma_cm between two hosts on one device (the two-guest tests run those).
const std::set<std::string>& unsupported_on_rxe() {
  static const std::set<std::string> k{
      "raw-packet",         "xrc-pair",         "rc-write-lat-device-clock", "feat-raw-packet-skip",
      "feat-xrc-skip",      "two-host-cm-exchange", "two-host-cm-rc",        "two-host-cm-reject",
      "two-host-cm-uc",     "two-host-cm-ud",   "two-host-cm-ud-multicast"};
  return k;
}

// The runs of tests/scenarios/run that fail on rxe, each at a known step: its verb, object and
// detail as the run JSON's FAILED line names them.
struct FailedStep {
  std::string verb, object, detail;
};
const std::map<std::string, FailedStep>& failing_on_rxe() {
  static const std::map<std::string, FailedStep> k{
      // the kernel refuses a transition the rule tables allow
      {"fail-alt-path-refused-by-rxe", {"ibv_modify_qp", "qa", "INIT->RTR"}},
      // the same with a fault on for the whole run: its removal's line keeps plan order
      {"fail-with-fault-applied", {"ibv_modify_qp", "qa", "INIT->RTR"}},
      // a transition expected to fail succeeds
      {"bringup-unexpected-success", {"ibv_modify_qp", "qb", "RTR->RTS"}},
      // a completion error in the traffic, after bring-up and smoke
      {"fail-rnr-unexpected", {"workload", "qa", "send: "}}};
  return k;
}

std::string text(const std::vector<int>& v) {
  std::string out;
  for (int x : v) out += (out.empty() ? "" : " ") + std::to_string(x);
  return out;
}

// What a run said: its JSON report and its exit status (0 pass, 1 fail, 77 unsupported).
struct RunOutcome {
  json::Value report;
  int exit_code = 0;
};

// `qpo plan --format json [--set S]... FILE` (exit 0, one JSON object).
json::Value plan_of(const std::string& path, const std::vector<std::string>& sets = {}) {
  std::vector<std::string> plan_args{"plan", "--format", "json"};
  for (const auto& s : sets) plan_args.insert(plan_args.end(), {"--set", s});
  plan_args.push_back(path);
  return qpo_json(plan_args, finish(start_qpo(plan_args)), {0}).value;
}

void check_run(const std::string& path, const json::Value& plan, const RunOutcome& ran);

// Plans and runs FILE here (both at once: the guest has two vCPUs and a child's start costs
// ~0.5 s under emulation).
void check_file(const std::string& path) {
  const std::vector<std::string> plan_args{"plan", "--format", "json", path};
  const std::vector<std::string> run_args{"run", "--no-lab", "--local", "--format", "json", path};
  Started planning = start_qpo(plan_args), running = start_qpo(run_args);
  Child planned = finish(planning), run_child = finish(running);
  const auto plan = qpo_json(plan_args, planned, {0}).value;
  auto ran = qpo_json(run_args, run_child, {0, 1, 77});
  check_run(path, plan, {std::move(ran.value), ran.exit_code});
}

// The cases a lab suite ran (`qpo test --json`), each with its kept report (--results), by
// file: a file with a matrix is a case per combination.
std::multimap<std::string, const json::Value*> cases_by_file(const json::Value& suite) {
  std::multimap<std::string, const json::Value*> out;
  for (const auto& c : member(suite, "cases", json::Kind::Array).items)
    out.emplace(fs::weakly_canonical(text_of(c, "file")).string(), &c);
  return out;
}

json::Value read_json(const std::string& path) {
  INFO(path);
  std::ifstream in(path);
  REQUIRE_MESSAGE(in, "cannot read it: the lab suites (rxe_qpo_test_suite, rxe_regression_suite) write it");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string error;
  auto v = json::parse(text, &error);
  REQUIRE_MESSAGE(v, "not JSON: " << error);
  return std::move(*v);
}

// Every scenario of `dir` against the reports its lab suite kept: each file was run (a case
// with a report; each combination of a matrix, planned with the same --set values), and qpo
// test's outcome is the run's exit status (pass 0, fail 1, skip 77).
void check_suite(const std::string& dir, const std::string& suite_json) {
  const auto suite = read_json(suite_json);
  const auto cases = cases_by_file(suite);
  const auto files = scenario_files(dir);
  REQUIRE_MESSAGE(!files.empty(), "no scenario in " << dir);
  for (const auto& f : files) {
    CAPTURE(f);
    auto [from, to] = cases.equal_range(fs::weakly_canonical(f).string());
    CHECK_MESSAGE(from != to, "not among the cases of " << suite_json);
    for (auto it = from; it != to; ++it) {
      const json::Value& c = *it->second;
      CAPTURE(text_of(c, "name"));
      const auto* results = c.find("results");
      if (!(results && results->is(json::Kind::String))) {
        FAIL_CHECK("its run kept no report (" << text_of(c, "reason") << ")");
        continue;
      }
      std::vector<std::string> sets;
      for (const auto& s : member(c, "set", json::Kind::Array).items) sets.push_back(s.text);
      const std::string& outcome = text_of(c, "outcome");
      int exit_code = outcome == "pass" ? 0 : outcome == "fail" ? 1 : outcome == "skip" ? 77 : -1;
      check_run(f, plan_of(f, sets), {read_json(results->text), exit_code});
    }
  }
}

void check_run(const std::string& path, const json::Value& plan, const RunOutcome& ran) {
  CAPTURE(path);
  const std::string name = fs::path(path).stem().string();
  const auto failing = failing_on_rxe().find(name);
  const std::string want_verdict = unsupported_on_rxe().count(name)  ? "UNSUPPORTED"
                                   : failing != failing_on_rxe().end() ? "FAIL"
                                                                       : "PASS";
  const auto& run = ran.report;
  // The verdict is part of what the run must say: every example and suite scenario passes on
  // rxe, except those whose feature rxe lacks, which say so (UNSUPPORTED), never pass or fail.
  const std::string& verdict = text_of(run, "verdict");
  CAPTURE(text_of(run, "reason"));
  CHECK(verdict == want_verdict);
  CHECK(ran.exit_code == (verdict == "PASS" ? 0 : verdict == "FAIL" ? 1 : 77));  // qpo run --help's exit statuses
  // The first FAILED line of a failed run: its plan step ends the walk before teardown.
  int failed_step = 0;
  for (const auto& s : member(run, "steps", json::Kind::Array).items) {
    if (text_of(s, "status") != "FAILED") continue;
    if (failing != failing_on_rxe().end()) {
      CHECK(text_of(s, "verb") == failing->second.verb);
      CHECK(text_of(s, "object") == failing->second.object);
      CHECK(text_of(s, "detail").rfind(failing->second.detail, 0) == 0);
    }
    failed_step = int_of(s, "step");
    break;
  }
  if (verdict == "FAIL") CHECK_MESSAGE(failed_step > 0, "a failed run names no FAILED step");
  for (const auto& h : member(plan, "hosts", json::Kind::Array).items) {
    const std::string& host = text_of(h, "host");
    auto want = plan_steps(h);
    if (want.all.empty()) continue;
    CAPTURE(host);
    auto got = walked(run, host);
    if (verdict == "PASS") {
      CHECK_MESSAGE(text(got) == text(want.all), "verdict PASS");
      continue;
    }
    // Stopped early: still every step of the plan in order, each it never reached (and each
    // teardown step with nothing to release) reported "not run"; before teardown those are
    // the steps after where it stopped, none before.
    CAPTURE(text(got));
    CHECK_MESSAGE(text(got) == text(want.all), "a stopped run reports every planned step");
    auto unrun = not_run(run, host);
    CAPTURE(text(unrun));
    std::vector<int> unrun_before;
    for (int x : unrun)
      if (std::find(want.before_teardown.begin(), want.before_teardown.end(), x) != want.before_teardown.end())
        unrun_before.push_back(x);
    auto want_unrun = want.before_teardown;
    want_unrun.erase(want_unrun.begin(), want_unrun.end() - static_cast<std::ptrdiff_t>(std::min(want_unrun.size(), unrun_before.size())));
    CHECK_MESSAGE(text(unrun_before) == text(want_unrun), "the steps not run are not the ones after where it stopped");
    if (verdict == "FAIL" && failing != failing_on_rxe().end()) {
      size_t ran = want.before_teardown.size() - unrun_before.size();
      int last_run = ran ? want.before_teardown[ran - 1] : 0;
      CHECK_MESSAGE(last_run == failed_step, "the steps not run do not start after the failed step");
    }
  }
}

}  // namespace

TEST_CASE("every example scenario's run walks its plan, step by step, on every host") {
  check_suite(QPO_SOURCE_DIR "/scenarios", QPO_LAB_RESULTS "/scenarios.json");
}

TEST_CASE("every regression-suite scenario's run walks its plan, step by step") {
  check_suite(QPO_SOURCE_DIR "/tests/scenarios/suite", QPO_LAB_RESULTS "/suite.json");
}

TEST_CASE("a failing run walks its plan up to the failed step, the rest reported not run, then teardown in order") {
  for (const auto& [name, step] : failing_on_rxe()) check_file(QPO_SOURCE_DIR "/tests/scenarios/run/" + name + ".yaml");
}
