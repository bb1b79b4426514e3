// A run that stops early still reports every planned step (exec/unrun_steps.h): the steps it
// never reached get one "not run" line each, in their places; the first of a batch counts the
// batch, the others show in the text log only with --verbose.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "exec/unrun_steps.h"
#include "plan_fixture.h"
#include "report/run_report.h"

using qpo::exec::mark_unrun_steps;
using qpo::exec::UnrunPart;
using qpo::report::RunReport;
using qpo::report::StepResult;
using qpo::report::StepStatus;

namespace {

const char* kPair =
    "version: 1\n"
    "devices: { d: { name: auto } }\n"
    "cqs: { c: { device: d, depth: 256 } }\n"
    "qps:\n"
    "  qa: { pd: d, type: RC, send_cq: c, recv_cq: c, connect: qb, states: { INIT: {}, RTR: {}, RTS: {} } }\n"
    "  qb: { pd: d, type: RC, send_cq: c, recv_cq: c, connect: qa, states: { INIT: {}, RTR: {}, RTS: {} } }\n";

StepResult ran(int plan_step, StepStatus status = StepStatus::Ok) {
  StepResult r;
  r.plan_step = plan_step;
  r.status = status;
  return r;
}

// The first teardown step's index in `h`.
int first_teardown(const qpo::plan::HostPlan& h) {
  for (const auto& s : h.steps)
    if (s.phase == qpo::plan::Phase::Teardown) return s.index;
  return 0;
}

}  // namespace

TEST_CASE("a run that failed at step 3 marks every later step before teardown not run, one line each, in plan order") {
  auto p = qpo::test::plan_of(kPair);
  const auto& h = p.hosts.at(0);
  int teardown = first_teardown(h);
  REQUIRE(teardown > 4);
  RunReport r;
  r.add(ran(1));
  r.add(ran(2));
  r.add(ran(3, StepStatus::Failed));
  size_t added = mark_unrun_steps(r, h, UnrunPart::BeforeTeardown);
  CHECK(added == static_cast<size_t>(teardown - 4));
  r.order_new_lines();
  REQUIRE(r.steps.size() == static_cast<size_t>(teardown - 1));
  for (int i = 3; i < teardown - 1; ++i) {
    const auto& line = r.steps[static_cast<size_t>(i)];
    CAPTURE(i);
    CHECK(line.plan_step == i + 1);
    CHECK(line.status == StepStatus::NotRun);
    CHECK(line.verb == h.steps[static_cast<size_t>(i)].verb.str());
    CHECK(line.object == h.steps[static_cast<size_t>(i)].object);
    CHECK(line.host == h.host);
  }
  CHECK(r.steps[3].message == "the run stopped before this step and " + std::to_string(added - 1) +
                                  " later ones (--verbose lists them)");
  CHECK(r.steps[4].message.empty());
}

TEST_CASE("a step that reported a line is never marked, and marking twice adds nothing") {
  auto p = qpo::test::plan_of(kPair);
  const auto& h = p.hosts.at(0);
  RunReport r;
  for (const auto& s : h.steps)
    if (s.phase != qpo::plan::Phase::Teardown && s.index != 5) r.add(ran(s.index));
  CHECK(mark_unrun_steps(r, h, UnrunPart::BeforeTeardown) == 1);
  CHECK(r.steps.back().plan_step == 5);
  CHECK(r.steps.back().message == "the run stopped before this step");
  CHECK(mark_unrun_steps(r, h, UnrunPart::BeforeTeardown) == 0);
}

TEST_CASE("teardown steps are marked only as their own part: what teardown did not release was never made") {
  auto p = qpo::test::plan_of(kPair);
  const auto& h = p.hosts.at(0);
  int teardown = first_teardown(h);
  RunReport r;
  r.add(ran(1, StepStatus::Failed));
  mark_unrun_steps(r, h, UnrunPart::BeforeTeardown);
  for (const auto& s : r.steps) CHECK(s.plan_step < teardown);
  r.add(ran(static_cast<int>(h.steps.size())));  // the device closed: the last teardown step ran
  size_t added = mark_unrun_steps(r, h, UnrunPart::Teardown);
  CHECK(added == h.steps.size() - static_cast<size_t>(teardown));
  r.order_new_lines();
  CHECK(r.steps.back().plan_step == static_cast<int>(h.steps.size()));
  CHECK(r.steps.back().status == StepStatus::Ok);
  const auto& first = r.steps[static_cast<size_t>(teardown - 1)];
  CHECK(first.plan_step == teardown);
  CHECK(first.phase == "teardown");
  CHECK(first.message.rfind("nothing for it to do: the run stopped before what it undoes was made", 0) == 0);
}

TEST_CASE("the text log shows a batch's first not-run line; --verbose shows each") {
  StepResult first = ran(4, StepStatus::NotRun), next = ran(5, StepStatus::NotRun);
  first.verb = "ibv_create_qp";
  first.message = "the run stopped before this step and 1 later one (--verbose lists it)";
  next.verb = "ibv_create_qp";
  std::string shown = qpo::report::render_step_text(first, false);
  CHECK(shown.find("ibv_create_qp") != std::string::npos);
  CHECK(shown.find("not run") != std::string::npos);
  CHECK(qpo::report::render_step_text(next, false).empty());
  CHECK(qpo::report::render_step_text(next, true).find("not run") != std::string::npos);
}

TEST_CASE("marking below the latest step leaves the later ones for after the cleanup's lines, which report on the latest step") {
  auto p = qpo::test::plan_of(kPair);
  const auto& h = p.hosts.at(0);
  int teardown = first_teardown(h);
  RunReport r;
  r.add(ran(1));
  r.add(ran(2, StepStatus::Failed));
  r.add(ran(5));  // a bring-up thread ran a later QP's step past the failure
  CHECK(mark_unrun_steps(r, h, UnrunPart::BeforeTeardown, r.latest_step()) == 2);  // 3 and 4
  r.order_new_lines();  // published
  r.add(ran(r.latest_step()));  // the run's cleanup (a fault removed): on the latest step that reported
  CHECK(mark_unrun_steps(r, h, UnrunPart::BeforeTeardown) == static_cast<size_t>(teardown - 6));  // 6 .. teardown - 1
  r.order_new_lines();
  std::vector<int> order;
  for (const auto& s : r.steps) order.push_back(s.plan_step);
  CHECK(order[0] == 1);
  CHECK(order[1] == 2);
  CHECK(order[2] == 3);
  CHECK(order[3] == 4);
  CHECK(order[4] == 5);
  CHECK(order[5] == 5);  // after what was published, before the later steps' lines
  CHECK(order[6] == 6);
  CHECK(std::is_sorted(order.begin(), order.end()));
}
