// verbs/qp_attr_fields.h: the ibv_qp_attr members qpo writes and reads back agree with the
// rule tables (schemas/verbs-rules.yaml) on the mask bit each takes.
#include <doctest/doctest.h>

#include "spec/rules.h"
#include "verbs/qp_attr_fields.h"

TEST_CASE("every scalar ibv_qp_attr member's mask bit is the rule tables' bit for that field") {
  const auto& rules = qpo::spec::RuleTable::builtin();
  for (const auto& f : qpo::verbs::kQpAttrFields) {
    CAPTURE(f.name);
    const auto* info = rules.attr_by_field(f.name);
    REQUIRE(info);
    CHECK(static_cast<int>(info->mask()) == f.mask);
  }
}

TEST_CASE("a field is stored and loaded at its own offset and width") {
  ibv_qp_attr a{};
  const auto* psn = qpo::verbs::qp_attr_field("sq_psn");
  const auto* timeout = qpo::verbs::qp_attr_field("timeout");
  REQUIRE(psn);
  REQUIRE(timeout);
  qpo::verbs::store(a, *psn, 0xABCDEF);
  qpo::verbs::store(a, *timeout, 18);
  CHECK(a.sq_psn == 0xABCDEFu);
  CHECK(a.timeout == 18);
  CHECK(qpo::verbs::load(a, *psn) == 0xABCDEFu);
  CHECK(qpo::verbs::qp_attr_field("ah_attr") == nullptr);
}
