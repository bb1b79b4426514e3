#pragma once
// Test helpers over a plan: build it from an inline YAML scenario (which must validate
// cleanly) and pick out its steps by kind. Header-only; shared by the plan-level unit tests.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "plan/plan.h"
#include "scenario_fixture.h"

namespace qpo::test {

// Loads, validates (no errors allowed: the dump is the failure message) and plans `yaml`.
inline plan::Plan plan_of(const std::string& yaml) {
  auto l = load_validate(yaml);
  REQUIRE_MESSAGE(l.scenario, l.dump());
  REQUIRE_MESSAGE(l.errors() == 0, l.dump());
  return plan::build_plan(*l.checked);
}

// Every step of `kind`, host by host in plan order.
inline std::vector<const plan::Step*> steps_of(const plan::Plan& p, plan::StepKind kind) {
  std::vector<const plan::Step*> out;
  for (const auto& h : p.hosts)
    for (const auto& st : h.steps)
      if (st.kind == kind) out.push_back(&st);
  return out;
}

// The first step of `kind`; nullptr when the plan has none.
inline const plan::Step* first_step(const plan::Plan& p, plan::StepKind kind) {
  auto v = steps_of(p, kind);
  return v.empty() ? nullptr : v[0];
}

}  // namespace qpo::test
