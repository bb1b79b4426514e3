// A host that fails tells the others at once (issue 18): its note names the step, verb,
// object and error; a host aborted by it, or only echoing it, has no note of its own; and
// across agent processes on this host (host b's device does not exist, so its open fails),
// host a, busy in its setup until told, is aborted within seconds, not the phase timeout.
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>

#include "exec/exchange.h"
#include "exec/failure_note.h"
#include "exec/host_session.h"
#include "report/run_report.h"
#include "scenario/model.h"
#include "test_threads.h"

using qpo::report::RunReport;
using qpo::report::StepResult;
using qpo::report::StepStatus;

namespace {

StepResult line(int plan_step, const std::string& verb, const std::string& object, StepStatus status,
                const std::string& message = "") {
  StepResult r;
  r.plan_step = plan_step;
  r.host = "b";
  r.verb = verb;
  r.object = object;
  r.status = status;
  r.message = message;
  return r;
}

}  // namespace

TEST_CASE("failure note: the first failed line's step, verb, object and message") {
  RunReport r;
  r.add(line(13, "ibv_modify_qp", "qb", StepStatus::Ok));
  r.add(line(14, "ibv_modify_qp", "qb", StepStatus::Failed, "ibv_modify_qp(qb, INIT->RTR) failed: EINVAL (Invalid argument)"));
  r.add(line(15, "ibv_modify_qp", "qc", StepStatus::Failed, "later"));
  r.fail("ibv_modify_qp(qb, INIT->RTR) failed: EINVAL (Invalid argument)");
  CHECK(qpo::exec::failure_note(r, "b") ==
        "host b failed at step 14 (ibv_modify_qp, qb): ibv_modify_qp(qb, INIT->RTR) failed: EINVAL (Invalid argument)");
}

TEST_CASE("failure note: no failed line gives the verdict's reason") {
  RunReport r;
  r.fail("fault injection failed");
  CHECK(qpo::exec::failure_note(r, "b") == "host b failed: fault injection failed");
}

TEST_CASE("failure note: a host that could not run the scenario stopped, it did not fail") {
  RunReport r;
  r.verdict = qpo::report::Verdict::Unsupported;
  r.reason = "unsupported by device (rxe): rdma_cm between hosts a and b needs a device per host";
  CHECK(qpo::exec::failure_note(r, "b") ==
        "host b stopped: unsupported by device (rxe): rdma_cm between hosts a and b needs a device per host");
}

TEST_CASE("failure note: none for a passing host, nor for one only aborted by another") {
  RunReport pass;
  CHECK(qpo::exec::failure_note(pass, "a").empty());
  RunReport aborted;
  aborted.add(line(0, "abort", "a", StepStatus::Failed, "aborted: host b failed at step 14 (ibv_modify_qp, qb): EINVAL"));
  aborted.fail("aborted: host b failed at step 14 (ibv_modify_qp, qb): EINVAL; tore down");
  CHECK(qpo::exec::failure_note(aborted, "a").empty());
  RunReport echo;
  echo.fail("another host failed before 'bring-up'; tore down");
  CHECK(qpo::exec::failure_note(echo, "a").empty());
}

TEST_CASE("is_echo: aborted and another-host reasons are echoes, a host's own error is not") {
  CHECK(qpo::exec::is_echo("aborted: host b failed at step 3 (rdma_connect, qa): REJECTED; tore down"));
  CHECK(qpo::exec::is_echo("another host failed before 'smoke'; tore down"));
  CHECK_FALSE(qpo::exec::is_echo("rdma_get_cm_event(qb): stopped while waiting for RDMA_CM_EVENT_CONNECT_REQUEST"));
}

namespace {

const std::string kAbort = "aborted: host a failed at step 17 (rdma_connect, qa): rdma_connect(qa): REJECTED";

// Host a's own failure: its rdma_connect was rejected.
RunReport host_a_failed() {
  RunReport r;
  StepResult s = line(17, "rdma_connect", "qa", StepStatus::Failed, "rdma_connect(qa): REJECTED");
  s.host = "a";
  r.add(s);
  r.fail("rdma_connect(qa): REJECTED");
  return r;
}

qpo::scenario::Scenario two_hosts() {
  qpo::scenario::Scenario s;
  s.name = "two";
  s.file = "two.yaml";
  return s;
}

}  // namespace

TEST_CASE("abort: a host that failed on its own keeps its error as its reason; the abort is a line after it") {
  RunReport b;
  b.add(line(14, "ibv_modify_qp", "qb", StepStatus::Failed, "ibv_modify_qp(qb, INIT->RTR) failed: EINVAL (Invalid argument)"));
  b.fail("ibv_modify_qp(qb, INIT->RTR) failed: EINVAL (Invalid argument)");
  qpo::exec::take_abort(b, "b", kAbort);
  CHECK(b.reason == "ibv_modify_qp(qb, INIT->RTR) failed: EINVAL (Invalid argument)");
  REQUIRE(b.steps.size() == 2);
  CHECK(b.steps[1].verb == "abort");
  CHECK(b.steps[1].message == kAbort);
  // Its own failure is worth telling the others too.
  CHECK(qpo::exec::failure_note(b, "b") ==
        "host b failed at step 14 (ibv_modify_qp, qb): ibv_modify_qp(qb, INIT->RTR) failed: EINVAL (Invalid argument)");
}

TEST_CASE("abort: a wait the stop cut short is a symptom; the abort becomes the reason") {
  RunReport b;
  b.add(line(12, "rdma_get_cm_event", "qb", StepStatus::Failed, "stopped while waiting for RDMA_CM_EVENT_CONNECT_REQUEST"));
  b.fail("rdma_get_cm_event(qb): stopped while waiting for RDMA_CM_EVENT_CONNECT_REQUEST");
  qpo::exec::take_abort(b, "b", kAbort);
  CHECK(b.reason == kAbort + "; tore down");
  CHECK(qpo::exec::failure_note(b, "b").empty());
}

TEST_CASE("abort: a host that had not failed is failed by the abort") {
  RunReport b;
  qpo::exec::take_abort(b, "b", kAbort);
  CHECK(b.verdict == qpo::report::Verdict::Fail);
  CHECK(b.reason == kAbort + "; tore down");
}

TEST_CASE("merge: both hosts' own errors stay theirs; the run's reason is the first host's") {
  auto s = two_hosts();
  RunReport b;
  b.add(line(14, "ibv_modify_qp", "qb", StepStatus::Failed, "ibv_modify_qp(qb, INIT->RTR) failed: EINVAL (Invalid argument)"));
  b.fail("ibv_modify_qp(qb, INIT->RTR) failed: EINVAL (Invalid argument)");
  qpo::exec::take_abort(b, "b", kAbort);
  std::vector<RunReport> parts{host_a_failed(), b};
  auto all = qpo::exec::merge_reports(s.name, s.file, parts, {"a", "b"});
  CHECK(all.reason == "host a: rdma_connect(qa): REJECTED");
  // Host b's lines keep its own error and the abort after it.
  REQUIRE(all.steps.size() == 3);
  CHECK(all.steps[1].message == "ibv_modify_qp(qb, INIT->RTR) failed: EINVAL (Invalid argument)");
  CHECK(all.steps[2].message == kAbort);
}

TEST_CASE("merge: an aborted host listed first is not the run's reason; the failing host's error is") {
  auto s = two_hosts();
  RunReport first;
  qpo::exec::take_abort(first, "b", kAbort);  // only aborted
  std::vector<RunReport> parts{first, host_a_failed()};
  auto all = qpo::exec::merge_reports(s.name, s.file, parts, {"b", "a"});
  CHECK(all.verdict == qpo::report::Verdict::Fail);
  CHECK(all.reason == "host a: rdma_connect(qa): REJECTED");
}

TEST_CASE("abort: the abort line reports on the latest plan step, also when that was a barrier's line") {
  RunReport a;
  a.current_step = 8;  // the last step run; the barrier after it names step 11 itself
  a.add(line(8, "ibv_create_qp", "qa", StepStatus::Ok, ""));
  a.add(line(11, "barrier", "all hosts", StepStatus::Ok, "every host arrived"));
  qpo::exec::take_abort(a, "a", kAbort);
  REQUIRE(a.steps.size() == 3);
  CHECK(a.steps[2].verb == "abort");
  CHECK(a.steps[2].plan_step == 11);  // plan_equals_run: the walked steps never go back
}

TEST_CASE("abort: taken while the bring-up window's lines are unnamed, it reports on their latest step and sits after them") {
  RunReport a;
  a.add(line(8, "ibv_create_qp", "qa", StepStatus::Ok, ""));
  qpo::exec::take_abort(a, "a", kAbort, 10);  // the window ran steps up to 10; their lines come later
  a.add(line(9, "publish", "qa", StepStatus::Ok, ""));  // named after the window closed
  a.add(line(10, "resolve", "a", StepStatus::Ok, ""));
  a.add(line(11, "barrier", "all hosts", StepStatus::Ok, ""));
  a.order_new_lines();
  REQUIRE(a.steps.size() == 5);
  CHECK(a.steps[3].verb == "abort");  // seen in the lab: 1 run in 30 of two-host-cm-uc --local
  CHECK(a.steps[3].plan_step == 10);
  CHECK(a.steps[4].plan_step == 11);
}

TEST_CASE("merge: a host aborted by its peer's capability skip makes the run unsupported, not failed") {
  auto s = two_hosts();
  RunReport a;
  qpo::exec::take_abort(a, "a", "aborted: host b stopped: unsupported by device (rxe): rdma_cm between hosts a and b needs a device per host");
  RunReport b;
  b.verdict = qpo::report::Verdict::Unsupported;
  b.reason = "unsupported by device (rxe): rdma_cm between hosts a and b needs a device per host";
  std::vector<RunReport> parts{a, b};  // the aborted host first, as the race in the lab had it
  auto all = qpo::exec::merge_reports(s.name, s.file, parts, {"a", "b"});
  CHECK(all.verdict == qpo::report::Verdict::Unsupported);
  CHECK(all.reason == "host b: unsupported by device (rxe): rdma_cm between hosts a and b needs a device per host");
}

TEST_CASE("--local: a failing host's note stops the busy host at once, in the agents' words") {
  qpo::exec::InProcessChannel ch({"a", "b"}, std::chrono::milliseconds(0));
  ch.member(0).note_failure("host a failed at step 23 (workload, qa1): boom");
  const auto* b = ch.member(1).stop_request();
  REQUIRE(b->requested.load());
  CHECK(b->why == "aborted: host a failed at step 23 (workload, qa1): boom");
  CHECK(qpo::exec::is_echo(b->why));
  CHECK_FALSE(ch.member(0).stop_request()->requested.load());
  // A second failure (b's, after the abort) does not overwrite the first: the cause stays.
  ch.member(1).note_failure("host b failed at step 24 (workload, qb2): later");
  CHECK_FALSE(ch.member(0).stop_request()->requested.load());
  CHECK(b->why == "aborted: host a failed at step 23 (workload, qa1): boom");
}

TEST_CASE("--local: the round a failing host arrives at says which host failed and why") {
  qpo::exec::InProcessChannel ch({"a", "b"}, std::chrono::milliseconds(0));
  ch.member(0).note_failure("host a failed at step 23 (workload, qa1): boom");
  bool b_ok = true;
  qpo::testing::WorkerThread tb([&] { b_ok = ch.member(1).barrier("after", true); });
  bool a_ok = ch.member(0).barrier("after", false);
  CHECK(tb.join() == "");
  CHECK_FALSE(a_ok);
  CHECK_FALSE(b_ok);
  CHECK(ch.member(1).failure() == "host a failed at step 23 (workload, qa1): boom");
}

namespace {

struct Run {
  int exit_code = -1;
  std::string out;
  double seconds = 0;
};

// qpo run with one agent process per host on this host; QPO_AGENT_FAULT in its environment.
Run run_agents(const std::string& fault, const std::string& file) {
  int out[2];
  REQUIRE(pipe(out) == 0);
  auto start = std::chrono::steady_clock::now();
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    dup2(out[1], 1);
    dup2(out[1], 2);
    close(out[0]);
    setenv("QPO_AGENT_FAULT", fault.c_str(), 1);
    execl(QPO_BINARY, QPO_BINARY, "run", "--no-lab", "--agents", "--local", "--phase-timeout", "100", file.c_str(),
          nullptr);
    _exit(127);
  }
  close(out[1]);
  Run r;
  char buf[4096];
  ssize_t n;
  while ((n = read(out[0], buf, sizeof buf)) > 0) r.out.append(buf, static_cast<size_t>(n));
  close(out[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

}  // namespace

TEST_CASE("agents: host b fails while host a is busy; a is aborted at once, naming b's step, and b's error is the run's") {
  // Host a stays in its setup until the controller aborts it (QPO_AGENT_FAULT stall); host b's
  // device does not exist (on any machine), so it arrives at the exchange failed. Without the
  // abort host a would be failed only by the phase timeout (100 s here): 50 s is far above
  // what it takes (well under a second).
  std::string file = "/tmp/qpo-host-failure-test-" + std::to_string(getpid()) + ".yaml";
  {
    std::ofstream out(file);
    out << "version: 1\nname: host-b-no-device\nhosts:\n  a: { address: localhost }\n  b: { address: localhost }\n"
           "devices:\n  da: { host: a, name: auto }\n  db: { host: b, name: qpo-no-such-device }\n"
           "cqs:\n  ca: { device: da, depth: 16 }\n  cb: { device: db, depth: 16 }\n";
  }
  auto r = run_agents("a:stall:setup", file);
  std::remove(file.c_str());
  INFO(r.out);
  CHECK(r.exit_code == 1);
  CHECK(r.seconds < 50);
  CHECK(r.out.find("\n     aborted: host b failed at step 1 (ibv_open_device, db): ") != std::string::npos);
  CHECK(r.out.find("\nFAIL host-b-no-device: host b: ") != std::string::npos);
  CHECK(r.out.find("no answer within") == std::string::npos);
}
