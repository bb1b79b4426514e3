// qpo run --capture's steps in the plan: each host starts its capture after its objects and
// before its first QP (every packet of the QPs is in the file), and stops it first in teardown.
#include <doctest/doctest.h>

#include <algorithm>

#include "golden/plan_of_file.h"
#include "unit/scenario_fixture.h"

using namespace qpo;

namespace {

plan::Plan captured_plan(const std::string& path) {
  test::Loaded l(test::source_file(path), path);
  l.scenario = scenario::load_scenario(l.source, l.sink);
  if (l.scenario) l.checked = validate::validate(*l.scenario, l.sink);
  REQUIRE(l.scenario);
  REQUIRE_FALSE(l.sink.has_errors());
  return plan::build_plan(*l.checked, {.capture = true});
}

size_t first_of(const plan::HostPlan& h, plan::StepKind k) {
  for (size_t i = 0; i < h.steps.size(); ++i)
    if (h.steps[i].kind == k) return i;
  return h.steps.size();
}

}  // namespace

TEST_CASE("with capture, each host's capture starts before its first QP and stops first in teardown") {
  auto p = captured_plan("tests/scenarios/wire/rc-write-16-packets.yaml");
  REQUIRE(p.hosts.size() == 2);
  for (const auto& h : p.hosts) {
    CAPTURE(h.host);
    size_t start = first_of(h, plan::StepKind::Capture), end = first_of(h, plan::StepKind::CaptureEnd);
    REQUIRE(start < h.steps.size());
    REQUIRE(end < h.steps.size());
    CHECK(start < first_of(h, plan::StepKind::CreateQp));
    CHECK(start > first_of(h, plan::StepKind::CreateCq));
    CHECK(h.steps[start].object == h.host);
    CHECK(h.steps[end].phase == plan::Phase::Teardown);
    CHECK(end < first_of(h, plan::StepKind::Destroy));
    CHECK(std::count_if(h.steps.begin(), h.steps.end(), [](const plan::Step& s) { return s.kind == plan::StepKind::Capture; }) == 1);
  }
}

TEST_CASE("without capture, the plan has no capture steps") {
  auto p = test::plan_of_file("tests/scenarios/wire/rc-write-16-packets.yaml");
  for (const auto& h : p.hosts) {
    CHECK(first_of(h, plan::StepKind::Capture) == h.steps.size());
    CHECK(first_of(h, plan::StepKind::CaptureEnd) == h.steps.size());
  }
}
