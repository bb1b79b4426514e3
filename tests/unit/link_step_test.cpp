// Timeline `link:` steps: loaded, resolved to a device, planned as `ip link set` on the
// device's host in a stage of their own.
#include <doctest/doctest.h>

#include <string>

#include "plan_fixture.h"

using qpo::plan::StepKind;
using qpo::test::plan_of;
using qpo::test::steps_of;

namespace {

const std::string kFlap = R"(version: 1
name: flap
devices: { da: { name: auto }, db: { name: rxe1 } }
cqs: { ca: { device: da, depth: 512 }, cb: { device: db, depth: 512 } }
qps:
  qa: { pd: da, type: RC, send_cq: ca, recv_cq: ca, connect: qb, states: { INIT: {}, RTR: {}, RTS: {} } }
  qb: { pd: db, type: RC, send_cq: cb, recv_cq: cb, connect: qa, states: { INIT: {}, RTR: {}, RTS: {} } }
timeline:
  - { link: down, on: db }
  - { event: IBV_EVENT_PORT_ERR, on: db, within: 5s }
  - { link: up, on: db }
)";

}  // namespace

TEST_CASE("a link step is an 'ip link set' of the device it names, with the state as its first arg") {
  const auto p = plan_of(kFlap);
  auto links = steps_of(p, StepKind::SetLink);
  REQUIRE(links.size() == 2);
  CHECK(links[0]->verb == "ip link set");
  CHECK(links[0]->object == "db");
  CHECK(links[0]->args[0].name == "state");
  CHECK(links[0]->args[0].value == "down");
  CHECK(links[1]->args[0].value == "up");
  CHECK_FALSE(links[0]->extra().link_up);  // what exec reads: the state as a value
  CHECK(links[1]->extra().link_up);
  CHECK(p.stages[static_cast<size_t>(links[0]->stage)] == "link db down");
  CHECK(p.stages[static_cast<size_t>(links[1]->stage)] == "link db up");
}

TEST_CASE("the link steps stand in timeline order around the event they cause") {
  const auto p = plan_of(kFlap);
  auto links = steps_of(p, StepKind::SetLink);
  auto events = steps_of(p, StepKind::WaitEvent);
  REQUIRE(links.size() == 2);
  REQUIRE(events.size() == 1);
  CHECK(links[0]->stage < events[0]->stage);
  CHECK(events[0]->stage < links[1]->stage);
}
