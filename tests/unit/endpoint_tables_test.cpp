// The tables endpoints share at scale: MR names (dataplane/mr_names.h) and the CQ router's
// owners (dataplane/cq_router.h). No device: the router is only assigned, never polled.
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "dataplane/cq_router.h"
#include "dataplane/mr_names.h"

using qpo::dataplane::MrNames;

namespace {

std::vector<std::string> names(const MrNames<int>& m) {
  std::vector<std::string> out;
  m.for_each([&](const std::string& name, int v) { out.push_back(name + "=" + std::to_string(v)); });
  return out;
}

}  // namespace

TEST_CASE("an endpoint's MR names: the shared table's and its own, in name order, its own first") {
  auto shared = std::make_shared<MrNames<int>::Table>(MrNames<int>::Table{{"b", 1}, {"d", 2}});
  MrNames<int> m(shared);
  m.add("a", 10);
  m.add("d", 20);  // hides the shared d
  m.add("e", 30);
  CHECK(names(m) == std::vector<std::string>{"a=10", "b=1", "d=20", "e=30"});
  CHECK(*m.first().first == "a");
  CHECK(*m.find("d") == 20);
  CHECK(*m.find("b") == 1);
  CHECK(m.find("c") == nullptr);
  CHECK((*shared)["d"] == 2);  // the other endpoints' d is untouched
}

TEST_CASE("changing an endpoint's MR copies it from the shared table: the others keep theirs") {
  auto shared = std::make_shared<MrNames<int>::Table>(MrNames<int>::Table{{"dst", 64}});
  MrNames<int> one(shared), other(shared);
  one["dst"] += 8;
  CHECK(*one.find("dst") == 72);
  CHECK(*other.find("dst") == 64);
}

TEST_CASE("10,000 endpoints over one table of 10,000 MRs hold one copy of it") {
  auto shared = std::make_shared<MrNames<int>::Table>();
  for (int i = 0; i < 10000; ++i) shared->emplace("dst." + std::to_string(i), i);
  std::vector<MrNames<int>> endpoints(10000, MrNames<int>(shared));
  CHECK(shared.use_count() == 10001);
  CHECK(*endpoints[9999].find("dst.9999") == 9999);
}

TEST_CASE("an empty endpoint has no first MR") {
  MrNames<int> m;
  CHECK(m.empty());
  CHECK(m.first().second == nullptr);
}

TEST_CASE("a CQ is shared from its second owner on, and stays shared when one owner is left") {
  qpo::dataplane::CqRouter router;
  auto* cq = reinterpret_cast<ibv_cq*>(0x1000);  // never polled
  for (uint32_t qpn = 1; qpn <= 10000; ++qpn) router.assign(cq, qpn, 0);
  CHECK(router.shared(cq) == nullptr);
  router.assign(cq, 5, 1);
  CHECK(router.shared(cq) != nullptr);
  router.assign(cq, 5, 0);  // one owner again: the maps still follow
  CHECK(router.shared(cq) != nullptr);
}

TEST_CASE("a CQ is one owner's alone while every QP on it is that owner's, shared before or not") {
  qpo::dataplane::CqRouter router;
  auto* cq = reinterpret_cast<ibv_cq*>(0x1000);  // never polled
  CHECK(router.exclusive(cq, 0));                 // nobody's yet
  router.assign(cq, 1, 0);
  router.assign_receives(cq, 1, 1);               // a QP's sends and receives, two readers
  CHECK_FALSE(router.exclusive(cq, 0));
  router.assign_receives(cq, 1, 0);               // a script's worker takes both
  CHECK(router.exclusive(cq, 0));
  CHECK_FALSE(router.exclusive(cq, 1));
  router.assign(cq, 2, 3);                        // another QP on the CQ, another reader
  CHECK_FALSE(router.exclusive(cq, 0));
}

TEST_CASE("an endpoint's own MR named before every shared one is its first: the default MR") {
  auto shared = std::make_shared<MrNames<int>::Table>(MrNames<int>::Table{{"m", 1}});
  MrNames<int> m(shared);
  m.add("a", 5);
  CHECK(*m.first().first == "a");
  CHECK(*m.first().second == 5);
  MrNames<int> hides(shared);
  hides.add("m", 9);  // the same name as the shared first: its own wins
  CHECK(*hides.first().second == 9);
}
