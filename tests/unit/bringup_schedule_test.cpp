// The plan works out the bring-up's order once (plan/bringup_schedule.h): the QP creates in
// plan order with their slot buffers' steps, and each half's steps tagged with their QP's
// chain, so exec runs a QP's steps in order on any thread and walks the rest in plan order.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "plan_fixture.h"

using qpo::plan::BringUpSchedule;
using qpo::plan::StepKind;

namespace {

const char* kSrqPair =
    "version: 1\n"
    "devices: { d: { name: auto } }\n"
    "cqs: { c: { device: d, depth: 512 } }\n"
    "srqs: { rq: { pd: d, max_wr: 16 } }\n"
    "qps:\n"
    "  qa: { pd: d, type: RC, send_cq: c, recv_cq: c, connect: qb, states: { INIT: {}, RTR: {}, RTS: {} } }\n"
    "  qb: { pd: d, type: RC, send_cq: c, recv_cq: c, srq: rq, connect: qa, states: { INIT: {}, RTR: {}, RTS: {} } }\n";

// "kind:object" of each entry of a half, in order.
std::vector<std::string> entries(const qpo::plan::HostPlan& h, const BringUpSchedule::Half& half) {
  std::vector<std::string> out;
  for (uint32_t pos : half.steps) out.push_back(std::string(step_kind_name(h.steps[pos].kind)) + ":" + h.steps[pos].object);
  return out;
}

}  // namespace

TEST_CASE("the schedule lists the creates in plan order, each with its slot buffer's step") {
  auto p = qpo::test::plan_of(kSrqPair);
  const auto& h = p.hosts.at(0);
  const auto& s = h.bringup;
  REQUIRE(s.creates.size() == 2);
  CHECK(h.steps[s.creates[0]].kind == StepKind::CreateQp);
  CHECK(h.steps[s.creates[0]].object == "qa");
  CHECK(h.steps[s.creates[1]].object == "qb");
  REQUIRE(s.slots.size() == 2);
  REQUIRE(s.slots[0] != BringUpSchedule::kNone);
  CHECK(h.steps[s.slots[0]].kind == StepKind::RegSlots);
  CHECK(h.steps[s.slots[0]].object == "qpo.slots.qa");
  CHECK(s.slots[0] < s.creates[0]);  // the buffer's line comes before its QP's
}

TEST_CASE("each half's steps keep plan order; a QP's steps carry its chain, an SRQ's none") {
  auto p = qpo::test::plan_of(kSrqPair);
  const auto& h = p.hosts.at(0);
  const auto& before = h.bringup.halves[0];
  const auto& after = h.bringup.halves[1];
  CHECK(entries(h, before) == std::vector<std::string>{"modify:qa", "modify:qb", "post_recv:qa", "post_srq_recv:rq"});
  CHECK(before.chain == std::vector<uint32_t>{0, 1, 0, BringUpSchedule::kNone});
  CHECK(entries(h, after) == std::vector<std::string>{"modify:qa", "modify:qa", "modify:qb", "modify:qb"});
  CHECK(after.chain == std::vector<uint32_t>{0, 0, 1, 1});
  for (size_t i = 1; i < before.steps.size(); ++i) CHECK(before.steps[i - 1] < before.steps[i]);
}

TEST_CASE("a QP's entries of a half, by chain, are its steps in order") {
  auto p = qpo::test::plan_of(kSrqPair);
  const auto& half = p.hosts.at(0).bringup.halves[0];
  REQUIRE(half.first.size() == 3);  // two QPs
  std::vector<uint32_t> qa(half.by_qp.begin() + half.first[0], half.by_qp.begin() + half.first[1]);
  std::vector<uint32_t> qb(half.by_qp.begin() + half.first[1], half.by_qp.begin() + half.first[2]);
  CHECK(qa == std::vector<uint32_t>{0, 2});  // its INIT, then its receives
  CHECK(qb == std::vector<uint32_t>{1});     // its receives are the SRQ's: not on its chain
}
