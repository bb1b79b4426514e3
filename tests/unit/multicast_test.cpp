// Multicast groups (`mcast_groups:`, a workload's `mcast:`): loading the GID, the validator's
// rules, and the plan's attach, group address handle and detach steps.
#include <doctest/doctest.h>

#include <cstring>
#include <string>

#include "plan/plan.h"
#include "scenario_fixture.h"

using qpo::plan::Plan;
using qpo::plan::StepKind;
using qpo::test::line_of;
using qpo::test::load_only;
using qpo::test::load_validate;

namespace {

// A UD sender tx and members m1, m2 (qkey 0x5eed); `groups` and `workloads` vary.
std::string scenario(const std::string& groups, const std::string& workloads = "") {
  std::string ud = "type: UD, send_cq: c, recv_cq: c, states: { INIT: { qkey: 0x5eed }, RTR: {}, RTS: {} } }\n";
  return "version: 1\n"
         "devices: { d: { name: auto } }\n"
         "cqs: { c: { device: d, depth: 1024 } }\n"
         "qps:\n"
         "  tx: { pd: d, " + ud +
         "  m1: { pd: d, " + ud +
         "  m2: { pd: d, " + ud +
         "mcast_groups:\n" + groups + workloads;
}

const std::string kGroup = "  g: { gid: 239.1.1.1, qkey: 0x5eed, members: [m1, m2] }\n";
const std::string kSend = "workloads:\n  to_g: { qp: tx, op: send, mcast: g, size: 64, iterations: 10 }\n";

int position(const Plan& p, const std::string& verb, const std::string& object) {
  for (const auto& st : p.hosts.at(0).steps)
    if (st.verb == verb && st.object == object) return st.index;
  return -1;
}

}  // namespace

TEST_CASE("an IPv4 group address becomes the IPv4-mapped GID; qkey, default mlid and members load") {
  auto l = load_only(scenario(kGroup));
  REQUIRE_MESSAGE(l.scenario, l.dump());
  const auto* g = l.scenario->mcast_group("g");
  REQUIRE(g);
  const uint8_t want[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 239, 1, 1, 1};
  CHECK(std::memcmp(g->gid, want, 16) == 0);
  CHECK(g->ipv4);
  CHECK(g->qkey == 0x5eed);
  CHECK(g->mlid == 0xc000);
  REQUIRE(g->members.size() == 2);
  CHECK(g->members[1].name == "m2");
}

TEST_CASE("an IPv6 group GID loads as written and is not IPv4") {
  auto l = load_only(scenario("  g: { gid: 'ff0e::1234', qkey: 0x5eed, members: [m1] }\n"));
  const auto* g = l.scenario->mcast_group("g");
  REQUIRE_MESSAGE(g, l.dump());
  CHECK(g->gid[0] == 0xff);
  CHECK(g->gid[1] == 0x0e);
  CHECK(g->gid[15] == 0x34);
  CHECK_FALSE(g->ipv4);
}

TEST_CASE("Q140: a unicast address is no group; Q103: no address at all") {
  std::string text = scenario("  g: { gid: 192.0.2.1, members: [m1] }\n  h: { gid: nonsense, members: [m1] }\n");
  auto l = load_only(text);
  const auto* d = l.one("Q140");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "'192.0.2.1' is not a multicast address");
  CHECK(d->loc.line == line_of(text, "192.0.2.1"));
  const auto* e = l.one("Q103");
  REQUIRE_MESSAGE(e, l.dump());
  CHECK(e->message == "'nonsense' is not a GID or an IP address");
}

TEST_CASE("a member of a counted group by name: all its members attach") {
  std::string text = "version: 1\ndevices: { d: { name: auto } }\ncqs: { c: { device: d, depth: 1024 } }\n"
                     "qps:\n  rx: { count: 3, pd: d, type: UD, send_cq: c, recv_cq: c, states: { INIT: {}, RTR: {}, RTS: {} } }\n"
                     "mcast_groups:\n  g: { gid: 239.1.1.2, members: [rx] }\n";
  auto l = load_validate(text);
  REQUIRE_MESSAGE(l.errors() == 0, l.dump());
  const auto* g = l.scenario->mcast_group("g");
  REQUIRE(g);
  REQUIRE(g->members.size() == 3);
  CHECK(g->members[2].name == "rx.2");
}

TEST_CASE("Q221: a member whose qkey is not the group's would drop everything") {
  auto l = load_validate(scenario("  g: { gid: 239.1.1.1, members: [m1] }\n"));  // default qkey 0x11111111
  const auto* d = l.one("Q221");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "member 'm1' has qkey 0x5eed, multicast group 'g' sends with qkey 0x11111111");
}

TEST_CASE("Q551: a member may not send to its own group") {
  auto l = load_validate(scenario(kGroup, "workloads:\n  w: { qp: m1, op: send, mcast: g, size: 64, iterations: 1 }\n"));
  const auto* d = l.one("Q551");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "'m1' sends to multicast group 'g', which it is a member of");
}

TEST_CASE("a group send needs no connect: peer") {
  auto l = load_validate(scenario(kGroup, kSend));
  CHECK_MESSAGE(l.errors() == 0, l.dump());
}

TEST_CASE("the plan attaches members before the first timeline step, the sender's group AH precedes the "
          "workload, and members detach before their QPs are destroyed") {
  auto l = load_validate(scenario(kGroup, kSend));
  REQUIRE_MESSAGE(l.errors() == 0, l.dump());
  Plan p = qpo::plan::build_plan(*l.checked);
  REQUIRE(!p.stages.empty());
  CHECK(p.stages.front() == "attach g");
  int attach1 = position(p, "ibv_attach_mcast", "g:m1"), attach2 = position(p, "ibv_attach_mcast", "g:m2");
  int ah = position(p, "ibv_create_ah", "qpo.ah.tx->g"), work = position(p, "workload", "to_g");
  int detach1 = position(p, "ibv_detach_mcast", "g:m1"), detach2 = position(p, "ibv_detach_mcast", "g:m2");
  int destroy1 = position(p, "ibv_destroy_qp", "m1"), destroy_ah = position(p, "ibv_destroy_ah", "qpo.ah.tx->g");
  CHECK(attach1 > 0);
  CHECK(attach1 < attach2);
  CHECK(attach2 < ah);
  CHECK(ah < work);
  CHECK(work < detach2);
  CHECK(detach2 < detach1);  // reverse order
  CHECK(detach1 < destroy1);
  CHECK(destroy_ah > work);
  for (const auto& st : p.hosts.at(0).steps)
    if (st.kind == StepKind::Workload) {
      bool names_group = false;
      for (const auto& a : st.args) names_group |= a.name == "mcast" && a.value == "g -> m1, m2";
      CHECK(names_group);
    }
}
