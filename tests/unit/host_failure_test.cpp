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

#include "exec/failure_note.h"
#include "report/run_report.h"

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
