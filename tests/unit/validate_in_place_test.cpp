// validate on a scenario handed over with std::move elaborates it in place: a copy of every
// QP's transitions was a quarter of validate's time at 10,000 QPs (bench/validate_scale.sh).
#include <doctest/doctest.h>

#include <utility>

#include "scenario_fixture.h"

TEST_CASE("validate(std::move(scenario)) keeps the loaded QPs instead of copying them") {
  qpo::test::Loaded l(qpo::test::rc_pair());
  auto s = qpo::scenario::load_scenario(l.source, l.sink);
  REQUIRE(s);
  const qpo::scenario::Qp* loaded_qps = s->qps.data();
  auto checked = qpo::validate::validate(std::move(*s), l.sink);
  CHECK(l.sink.error_count() == 0);
  CHECK(checked.model().qps.data() == loaded_qps);
  REQUIRE(checked.model().qp("qa"));
  CHECK(checked.model().qp("qa")->transitions.at(1).mask != 0);  // elaborated: the RTR mask is filled in
}

TEST_CASE("validate(const scenario&) leaves the caller's scenario as loaded") {
  auto l = qpo::test::load_only(qpo::test::rc_pair());
  REQUIRE(l.scenario);
  auto checked = qpo::validate::validate(*l.scenario, l.sink);
  CHECK(checked.model().qps.data() != l.scenario->qps.data());
  CHECK(l.scenario->qp("qa")->transitions.at(1).mask == 0);  // not elaborated
}
