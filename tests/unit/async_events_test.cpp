// Asynchronous events as outcomes and the SRQ limit: the timeline's `event:`, `forbid:` and
// `{srq:, srq_limit:}` steps as the loader reads them, the validator checks what they name,
// and the planner turns them into typed steps; `srqs.X.srq_limit` armed after bring-up posts.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "plan/plan.h"
#include "plan_fixture.h"
#include "scenario_fixture.h"
#include "util/async_event_names.h"

using qpo::plan::Phase;
using qpo::plan::Plan;
using qpo::plan::Step;
using qpo::plan::StepKind;
using qpo::scenario::TimelineStep;
using qpo::test::line_of;
using qpo::test::load_only;
using qpo::test::load_validate;

using qpo::test::plan_of;
using qpo::test::steps_of;
using qpo::test::first_step;

namespace {

// An RC pair whose receiver qb takes its receives from SRQ `rq`; `srq_extra` goes into rq's
// map, `tail` at the end (timeline:).
std::string srq_pair(const std::string& srq_extra, const std::string& tail) {
  return "version: 1\n"
         "devices: { d: { name: auto } }\n"
         "cqs: { c: { device: d, depth: 256 } }\n"
         "srqs: { rq: { pd: d, max_wr: 16" + srq_extra + " } }\n"
         "qps:\n"
         "  qa: { pd: d, type: RC, send_cq: c, recv_cq: c, connect: qb, states: { INIT: {}, RTR: {}, RTS: {} } }\n"
         "  qb: { pd: d, type: RC, send_cq: c, recv_cq: c, srq: rq, connect: qa, states: { INIT: {}, RTR: {}, RTS: {} } }\n" +
         tail;
}

}  // namespace

TEST_CASE("the event table names each ibv_event_type once, with the object it is about") {
  const auto* e = qpo::util::parse_async_event("srq_limit_reached");
  REQUIRE(e);
  CHECK(std::string(e->name) == "IBV_EVENT_SRQ_LIMIT_REACHED");
  CHECK(e->object == qpo::util::EventObject::Srq);
  CHECK(qpo::util::parse_async_event("IBV_EVENT_QP_LAST_WQE_REACHED")->object == qpo::util::EventObject::Qp);
  CHECK(qpo::util::parse_async_event("IBV_EVENT_CQ_ERR")->object == qpo::util::EventObject::Cq);
  CHECK(qpo::util::parse_async_event("PORT_ERR")->object == qpo::util::EventObject::Port);
  CHECK_FALSE(qpo::util::parse_async_event("IBV_EVENT_NOPE"));
  CHECK(std::string(qpo::util::async_event_name(e->value)) == "IBV_EVENT_SRQ_LIMIT_REACHED");
  CHECK(std::string(qpo::util::async_event_name(9999)) == "IBV_EVENT_(unknown)");
}

TEST_CASE("an event step loads its event, object and wait; forbid: marks it forbidden") {
  auto l = load_validate(srq_pair("", "timeline:\n"
                                      "  - { event: IBV_EVENT_SRQ_LIMIT_REACHED, on: rq, within: 2s }\n"
                                      "  - { forbid: QP_FATAL, on: qa }\n"));
  REQUIRE_MESSAGE(l.errors() == 0, l.dump());
  const auto& tl = l.scenario->timeline;
  REQUIRE(tl.size() == 2);
  CHECK(tl[0].kind == TimelineStep::Kind::Event);
  CHECK(tl[0].event == "IBV_EVENT_SRQ_LIMIT_REACHED");
  CHECK(tl[0].on.name == "rq");
  CHECK(tl[0].within_ms == 2000);
  CHECK_FALSE(tl[0].forbid);
  CHECK(tl[1].event == "IBV_EVENT_QP_FATAL");  // the short spelling reads as the full name
  CHECK(tl[1].forbid);
  CHECK(tl[1].within_ms == 0);
}

TEST_CASE("an unknown event name is Q106 with a did-you-mean") {
  std::string y = srq_pair("", "timeline:\n  - { event: IBV_EVENT_SRQ_LIMIT_REACH, on: rq }\n");
  auto l = load_only(y);
  const auto* d = l.one("Q106");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "unknown asynchronous event 'IBV_EVENT_SRQ_LIMIT_REACH'");
  CHECK(d->hint == "did you mean 'IBV_EVENT_SRQ_LIMIT_REACHED'?");
  CHECK(d->loc.line == line_of(y, "SRQ_LIMIT_REACH,"));
}

TEST_CASE("an event step without 'on' is Q104 naming the kind of object the event is about") {
  auto l = load_only(srq_pair("", "timeline:\n  - { event: IBV_EVENT_SRQ_LIMIT_REACHED }\n"));
  const auto* d = l.one("Q104");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "an event step needs 'on': the SRQ it is about");
}

TEST_CASE("'event' and 'forbid' in one step is Q105; 'within' on a pause is Q101") {
  auto both = load_only(srq_pair("", "timeline:\n  - { event: IBV_EVENT_SRQ_LIMIT_REACHED, forbid: IBV_EVENT_SRQ_LIMIT_REACHED, on: rq }\n"));
  REQUIRE_MESSAGE(both.one("Q105"), both.dump());
  auto stray = load_only(srq_pair("", "timeline:\n  - { pause: 1ms, within: 2s }\n"));
  const auto* d = stray.one("Q101");
  REQUIRE_MESSAGE(d, stray.dump());
  CHECK(d->message == "'within' belongs to an event step ({event: NAME, on: OBJECT})");
}

TEST_CASE("an SRQ event on a QP is Q204, and the hint names the QP's SRQ") {
  std::string y = srq_pair("", "timeline:\n  - { event: IBV_EVENT_SRQ_LIMIT_REACHED, on: qb }\n");
  auto l = load_validate(y);
  const auto* d = l.one("Q204");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "IBV_EVENT_SRQ_LIMIT_REACHED is about an SRQ, but 'qb' is a qp");
  CHECK(d->hint == "'qb' takes its receives from SRQ 'rq': name that");
  CHECK(d->path == "timeline[0].on");
}

TEST_CASE("QP events on an SRQ, CQ_ERR on a QP, port events on a CQ are Q204") {
  auto qp_on_srq = load_validate(srq_pair("", "timeline:\n  - { event: IBV_EVENT_QP_LAST_WQE_REACHED, on: rq }\n"));
  REQUIRE_MESSAGE(qp_on_srq.one("Q204"), qp_on_srq.dump());
  CHECK(qp_on_srq.one("Q204")->hint == "name a QP on SRQ 'rq'");
  auto cq_on_qp = load_validate(srq_pair("", "timeline:\n  - { forbid: IBV_EVENT_CQ_ERR, on: qa }\n"));
  REQUIRE_MESSAGE(cq_on_qp.one("Q204"), cq_on_qp.dump());
  auto port_on_cq = load_validate(srq_pair("", "timeline:\n  - { event: IBV_EVENT_PORT_ERR, on: c }\n"));
  REQUIRE_MESSAGE(port_on_cq.one("Q204"), port_on_cq.dump());
  CHECK(port_on_cq.one("Q204")->message ==
        "IBV_EVENT_PORT_ERR is about a device (the event is about its port), but 'c' is a cq");
  auto port_on_device = load_validate(srq_pair("", "timeline:\n  - { event: IBV_EVENT_PORT_ACTIVE, on: d }\n"));
  CHECK_MESSAGE(port_on_device.errors() == 0, port_on_device.dump());
}

TEST_CASE("an event step naming nothing is Q201 with a did-you-mean among the right kind") {
  auto l = load_validate(srq_pair("", "timeline:\n  - { event: IBV_EVENT_SRQ_LIMIT_REACHED, on: rqq }\n"));
  const auto* d = l.one("Q201");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->hint == "did you mean 'rq'?");
}

TEST_CASE("srqs.X.srq_limit is armed by ibv_modify_srq after the SRQ's receives are posted") {
  Plan p = plan_of(srq_pair(", srq_limit: 8", ""));
  const auto& steps = p.hosts.at(0).steps;
  int posted = 0, armed = 0;
  for (const auto& st : steps) {
    if (st.kind == StepKind::PostSrqRecv) posted = st.index;
    if (st.kind == StepKind::ModifySrq) armed = st.index;
  }
  REQUIRE(posted > 0);
  REQUIRE(armed == posted + 1);
  const auto& arm = steps[static_cast<size_t>(armed - 1)];
  CHECK(arm.verb == "ibv_modify_srq");
  CHECK(arm.object == "rq");
  CHECK(arm.phase == Phase::BringUp);
  CHECK(arm.extra().srq_limit == 8);
  CHECK(arm.args.at(0).value == "8");
  CHECK(arm.args.at(1).value == "IBV_SRQ_LIMIT");
}

TEST_CASE("an SRQ without srq_limit gets no ibv_modify_srq") {
  Plan p = plan_of(srq_pair("", ""));
  CHECK(steps_of(p, StepKind::ModifySrq).empty());
}

TEST_CASE("event, forbid and srq steps become their own stages of typed steps") {
  Plan p = plan_of(srq_pair(", srq_limit: 16", "timeline:\n"
                                              "  - { forbid: IBV_EVENT_SRQ_LIMIT_REACHED, on: rq }\n"
                                              "  - smoke\n"
                                              "  - { event: IBV_EVENT_SRQ_LIMIT_REACHED, on: rq, within: 3s }\n"
                                              "  - { srq: rq, srq_limit: 16 }\n"));
  const auto* forbid = first_step(p, StepKind::ForbidEvent);
  const auto* wait = first_step(p, StepKind::WaitEvent);
  auto arms = steps_of(p, StepKind::ModifySrq);
  REQUIRE(forbid);
  REQUIRE(wait);
  REQUIRE(arms.size() == 2);  // bring-up's, then the re-arm
  CHECK(forbid->extra().event == "IBV_EVENT_SRQ_LIMIT_REACHED");
  CHECK(forbid->object == "rq");
  CHECK(forbid->extra().within_ms == 0);
  CHECK(wait->extra().within_ms == 3000);
  CHECK(wait->verb == "ibv_get_async_event");
  CHECK(forbid->stage < wait->stage);
  CHECK(wait->stage < arms[1]->stage);
  CHECK(arms[1]->phase == Phase::Transitions);
  CHECK(p.stages.at(static_cast<size_t>(wait->stage)) == "event IBV_EVENT_SRQ_LIMIT_REACHED on rq");
  CHECK(p.stages.at(static_cast<size_t>(forbid->stage)) == "forbid IBV_EVENT_SRQ_LIMIT_REACHED on rq");
  CHECK(p.stages.at(static_cast<size_t>(arms[1]->stage)) == "srq_limit rq 16");
}

TEST_CASE("the SQ drained wait after RTS->SQD is the same typed step, waiting --timeout-ms") {
  Plan p = plan_of(srq_pair("", "timeline:\n  - { qp: qa, to: SQD, attrs: { en_sqd_async_notify: 1 } }\n"));
  const auto* wait = first_step(p, StepKind::WaitEvent);
  REQUIRE(wait);
  CHECK(wait->extra().event == "IBV_EVENT_SQ_DRAINED");
  CHECK(wait->object == "qa");
  CHECK(wait->extra().within_ms == 0);
  CHECK(wait->args.at(1).value == "--timeout-ms");
}

TEST_CASE("an srq step needs srq_limit (Q104) and names an SRQ (Q201)") {
  auto missing = load_only(srq_pair("", "timeline:\n  - { srq: rq }\n"));
  REQUIRE_MESSAGE(missing.one("Q104"), missing.dump());
  CHECK(missing.one("Q104")->message == "an SRQ step needs 'srq_limit'");
  auto wrong = load_validate(srq_pair("", "timeline:\n  - { srq: qa, srq_limit: 4 }\n"));
  const auto* d = wrong.one("Q201");
  REQUIRE_MESSAGE(d, wrong.dump());
  CHECK(d->message == "'qa' is not defined in srqs (it is a qp)");
}

TEST_CASE("srq_limit above max_wr is warning Q607, on the field and on a re-arm step") {
  std::string y = srq_pair(", srq_limit: 17", "timeline:\n  - { srq: rq, srq_limit: 32 }\n");
  auto l = load_validate(y);
  auto ds = l.with_code("Q607");
  REQUIRE_MESSAGE(ds.size() == 2, l.dump());
  CHECK(ds[0]->message == "srq_limit 17 is above the max_wr 16 of SRQ 'rq'");
  CHECK(ds[0]->path == "srqs.rq.srq_limit");
  CHECK(ds[1]->message == "srq_limit 32 is above the max_wr 16 of SRQ 'rq'");
  CHECK(ds[1]->path == "timeline[0].srq_limit");
  auto equal = load_validate(srq_pair(", srq_limit: 16", ""));
  CHECK(equal.with_code("Q607").empty());
}

TEST_CASE("a CQ with timestamps: true is created with ibv_create_cq_ex asking for completion timestamps") {
  std::string y = srq_pair("", "");
  y.replace(y.find("depth: 256 }"), 12, "depth: 256, timestamps: true }");
  Plan p = plan_of(y);
  const auto* create = first_step(p, StepKind::CreateCq);
  REQUIRE(create);
  CHECK(create->verb == "ibv_create_cq_ex");
  REQUIRE(create->args.size() == 2);
  CHECK(create->args[1].name == "wc_flags");
  CHECK(create->args[1].value == "IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP");
  auto plain = plan_of(srq_pair("", ""));
  CHECK(first_step(plain, StepKind::CreateCq)->verb == "ibv_create_cq");
}

TEST_CASE("requires: [cq_timestamps] is a known capability") {
  auto l = load_only("requires: [cq_timestamps]\n" + srq_pair("", ""));
  CHECK_MESSAGE(l.errors() == 0, l.dump());
  REQUIRE(l.scenario);
  CHECK(l.scenario->requires_caps == std::vector<std::string>{"cq_timestamps"});
}

TEST_CASE("an event step for SQ_DRAINED after RTS->SQD waits instead of the implied wait") {
  Plan p = plan_of(srq_pair("", "timeline:\n"
                                "  - { qp: qa, to: SQD, attrs: { en_sqd_async_notify: 1 } }\n"
                                "  - { event: IBV_EVENT_SQ_DRAINED, on: qa, within: 2s }\n"));
  auto waits = steps_of(p, StepKind::WaitEvent);
  REQUIRE(waits.size() == 1);
  CHECK(waits[0]->extra().within_ms == 2000);
  CHECK(p.stages.at(static_cast<size_t>(waits[0]->stage)) == "event IBV_EVENT_SQ_DRAINED on qa");
}

TEST_CASE("an event on a counted group or a slice is Q201: one QP belongs in on:") {
  std::string yaml =
      "version: 1\n"
      "devices: { d: { name: auto } }\n"
      "cqs: { c: { device: d, depth: 256 } }\n"
      "qps:\n"
      "  cli: { count: 2, pd: d, type: RC, send_cq: c, recv_cq: c, connect: srv, states: { INIT: {}, RTR: {}, RTS: {} } }\n"
      "  srv: { count: 2, pd: d, type: RC, send_cq: c, recv_cq: c, connect: cli, states: { INIT: {}, RTR: {}, RTS: {} } }\n"
      "timeline:\n"
      "  - { forbid: IBV_EVENT_QP_FATAL, on: cli }\n"
      "  - { forbid: IBV_EVENT_QP_FATAL, on: 'cli[0]' }\n"
      "  - { forbid: IBV_EVENT_QP_FATAL, on: cli.1 }\n";
  auto l = load_validate(yaml);
  auto q201 = l.with_code("Q201");
  REQUIRE_MESSAGE(q201.size() == 2, l.dump());
  CHECK(q201[0]->message == "'cli' names a counted group; one object of qps belongs here");
  CHECK(q201[0]->hint == "name one member: cli.0 .. cli.1");
  CHECK(q201[1]->message == "'cli[0]' names a counted group; one object of qps belongs here");
}
