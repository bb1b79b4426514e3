// exec's resource table (exec/id_table.h) and the ids the planner gives QPs (plan/qp_id.h):
// every step on a QP, and every workload, names its QPs by id.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "exec/id_table.h"
#include "plan/plan.h"
#include "plan_fixture.h"
#include "scenario_fixture.h"

using qpo::exec::IdTable;
using qpo::plan::kNoQp;

namespace {

struct Record {
  std::string name;
};

}  // namespace

TEST_CASE("a record put under an id is found by it, and other ids have none") {
  IdTable<Record> t;
  t.size_for(4);
  t.put(2, {"qb"});
  REQUIRE(t.find(2));
  CHECK(t.find(2)->name == "qb");
  CHECK_FALSE(t.has(0));
  CHECK_FALSE(t.has(kNoQp));
  CHECK(t.size() == 1);
}

TEST_CASE("a record keeps its address while others are put and one is unlisted") {
  IdTable<Record> t;
  t.size_for(1000);
  Record* first = &t.put(0, {"q0"});
  for (uint32_t i = 1; i < 1000; ++i) t.put(i, {"q" + std::to_string(i)});
  t.erase(500);
  CHECK(&t.at(0) == first);
  CHECK(first->name == "q0");
  CHECK_FALSE(t.has(500));
  CHECK(t.size() == 999);
  CHECK(t.made() == 1000);  // an ordinal taken from made() is never given twice
}

TEST_CASE("for_each walks the listed records in the order they were made, not by id") {
  IdTable<Record> t;
  t.size_for(3);
  t.put(2, {"c"});
  t.put(0, {"a"});
  t.put(1, {"b"});
  t.erase(0);
  std::vector<std::string> seen;
  t.for_each([&](uint32_t, const Record& r) { seen.push_back(r.name); });
  CHECK(seen == std::vector<std::string>{"c", "b"});
}

TEST_CASE("at() on an id without a record throws out_of_range naming the id") {
  IdTable<Record> t;
  t.size_for(2);
  CHECK_THROWS_WITH_AS(t.at(1), "id 1 has no record on this host", std::out_of_range);
  CHECK_THROWS_WITH_AS(t.at(kNoQp), "not an object of the plan", std::out_of_range);
  CHECK_THROWS_WITH_AS(t.put(2, {"x"}), "id 2 is not in the plan", std::out_of_range);
}

TEST_CASE("QP ids follow the scenario's QP order; every step on a QP carries its id") {
  auto p = qpo::test::plan_of(qpo::test::rc_pair());
  REQUIRE(p.qp_count() == 2);
  CHECK(p.qp_id("qa") == 0);
  CHECK(p.qp_id("qb") == 1);
  CHECK(p.qp_id("ca") == kNoQp);  // a CQ's name
  size_t on_qps = 0;
  for (const auto& h : p.hosts)
    for (const auto& st : h.steps)
      if (p.qp_id(st.object) != kNoQp) {
        CAPTURE(st.object);
        CHECK(st.id == p.qp_id(st.object));
        ++on_qps;
      }
  // Each QP: create, three modifies, receives, destroy at least.
  CHECK(on_qps >= 12);
}

TEST_CASE("a step on a device, PD, CQ or MR carries the id of its kind") {
  using qpo::plan::ObjectKind;
  auto p = qpo::test::plan_of(qpo::test::rc_pair());
  CHECK(p.count_of(ObjectKind::Device) == 1);
  CHECK(p.id_of(ObjectKind::Device, "da") == 0);
  CHECK(p.id_of(ObjectKind::Cq, "da") == qpo::plan::kNoObject);  // a device's name, asked as a CQ's
  auto first = [&](qpo::plan::StepKind kind) { return qpo::test::first_step(p, kind); };
  REQUIRE(first(qpo::plan::StepKind::OpenDevice));
  CHECK(first(qpo::plan::StepKind::OpenDevice)->id == p.id_of(ObjectKind::Device, "da"));
  REQUIRE(first(qpo::plan::StepKind::AllocPd));
  CHECK(first(qpo::plan::StepKind::AllocPd)->id == p.id_of(ObjectKind::Pd, "pa"));
  REQUIRE(first(qpo::plan::StepKind::CreateCq));
  CHECK(first(qpo::plan::StepKind::CreateCq)->id == p.id_of(ObjectKind::Cq, "ca"));
  // What each setup step makes is named by id too, and what it is made on.
  const auto* cq = first(qpo::plan::StepKind::CreateCq);
  CHECK(p.setup_of(*cq).id == p.id_of(ObjectKind::Cq, "ca"));
  CHECK(p.setup_of(*cq).on_id == p.id_of(ObjectKind::Device, "da"));
  const auto* mr = first(qpo::plan::StepKind::RegMr);
  REQUIRE(mr);
  CHECK(mr->id == p.id_of(ObjectKind::Mr, "ma"));
  CHECK(mr->id != qpo::plan::kNoObject);
  CHECK(p.setup_of(*mr).id == mr->id);
  CHECK(p.setup_of(*mr).on_id == p.id_of(ObjectKind::Pd, "pa"));
}

TEST_CASE("a teardown step carries the id of the kind it destroys, a PD's too (a device's name)") {
  using qpo::plan::ObjectKind;
  auto p = qpo::test::plan_of(qpo::test::rc_pair());
  auto destroy = [&](const std::string& verb, const std::string& object) -> const qpo::plan::Step* {
    for (const auto& h : p.hosts)
      for (const auto& st : h.steps)
        if (st.kind == qpo::plan::StepKind::Destroy && st.verb == verb && st.object == object) return &st;
    return nullptr;
  };
  REQUIRE(destroy("ibv_dealloc_pd", "pa"));
  CHECK(destroy("ibv_dealloc_pd", "pa")->id == p.id_of(ObjectKind::Pd, "pa"));
  REQUIRE(destroy("ibv_dereg_mr", "ma"));
  CHECK(destroy("ibv_dereg_mr", "ma")->id == p.id_of(ObjectKind::Mr, "ma"));
  REQUIRE(destroy("ibv_destroy_qp", "qb"));
  CHECK(destroy("ibv_destroy_qp", "qb")->id == p.qp_id("qb"));
  REQUIRE(destroy("ibv_close_device", "da"));
  CHECK(destroy("ibv_close_device", "da")->id == p.id_of(ObjectKind::Device, "da"));
  // qpo's own buffers are no scenario object: no id.
  REQUIRE(destroy("ibv_dereg_mr", "qpo.slots.qa"));
  CHECK(destroy("ibv_dereg_mr", "qpo.slots.qa")->id == qpo::plan::kNoObject);
}

TEST_CASE("a workload names its QP and its receivers by id") {
  auto p = qpo::test::plan_of(qpo::test::rc_pair(
      "{ path_mtu: auto, dest_qp_num: peer, rq_psn: peer, max_dest_rd_atomic: 1, "
      "ah_attr: { is_global: true, grh: { dgid: peer, sgid_index: auto, hop_limit: 1 } } }",
      "{ path_mtu: auto }",
      "workloads:\n  send: { qp: qa, op: send, local_mr: ma, size: 64, iterations: 10 }\n"));
  REQUIRE(p.workloads.size() == 1);
  CHECK(p.workloads[0].qp == p.qp_id("qa"));
  CHECK(p.workloads[0].receiver_ids == std::vector<qpo::plan::QpId>{p.qp_id("qb")});
}

TEST_CASE("a device's default PD, named as the device, has a PD id on its ibv_alloc_pd and the device a device id") {
  using qpo::plan::ObjectKind;
  std::string yaml = qpo::test::rc_pair();
  auto replace_all = [&yaml](const std::string& from, const std::string& to) {
    for (size_t at = yaml.find(from); at != std::string::npos; at = yaml.find(from, at + to.size())) yaml.replace(at, from.size(), to);
  };
  replace_all("pds:     { pa: { device: da } }\n", "");
  replace_all("pd: pa", "pd: da");
  auto p = qpo::test::plan_of(yaml);
  REQUIRE(p.id_of(ObjectKind::Pd, "da") != qpo::plan::kNoObject);
  const auto* pd = qpo::test::first_step(p, qpo::plan::StepKind::AllocPd);
  const auto* dev = qpo::test::first_step(p, qpo::plan::StepKind::OpenDevice);
  REQUIRE(pd);
  REQUIRE(dev);
  CHECK(pd->object == "da");
  CHECK(pd->id == p.id_of(ObjectKind::Pd, "da"));
  CHECK(p.setup_of(*pd).id == p.id_of(ObjectKind::Pd, "da"));
  CHECK(p.setup_of(*pd).on_id == p.id_of(ObjectKind::Device, "da"));
  CHECK(dev->id == p.id_of(ObjectKind::Device, "da"));
}
