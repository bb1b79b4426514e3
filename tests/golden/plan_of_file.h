#pragma once
// The plan of a scenario file of the source tree (`scenarios/x.yaml`), loaded and validated
// with no errors (the test stops otherwise): what the golden plan tests start from.
#include <doctest/doctest.h>

#include <string>

#include "plan/plan.h"
#include "unit/scenario_fixture.h"

namespace qpo::test {

inline plan::Plan plan_of_file(const std::string& path) {
  Loaded l(source_file(path), path);
  l.scenario = scenario::load_scenario(l.source, l.sink);
  if (l.scenario) l.checked = validate::validate(*l.scenario, l.sink);
  REQUIRE(l.scenario);
  REQUIRE_FALSE(l.sink.has_errors());
  return plan::build_plan(*l.checked);
}

}  // namespace qpo::test
