// Memory windows (`mws:`): loading, the validator's rules (Q120, Q206, Q207, Q530-Q535), the
// plan's alloc/bind/invalidate/publish/dealloc steps, and the mw/odp requirements.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "plan/plan.h"
#include "plan_fixture.h"
#include "scenario_fixture.h"

using qpo::plan::Plan;
using qpo::plan::Step;
using qpo::plan::StepKind;
using qpo::scenario::TimelineStep;
using qpo::test::line_of;
using qpo::test::load_only;
using qpo::test::load_validate;

using qpo::test::steps_of;

namespace {

// Two RC pairs (qa->qb, qc->qd in PD d; qe in PD other), `dst` bindable; `mws` and `tail` vary.
std::string scenario(const std::string& mws, const std::string& tail, const std::string& dst_access = "[local_write, mw_bind]") {
  std::string qp = "type: RC, send_cq: c, recv_cq: c, states: { INIT: { qp_access_flags: [remote_write] }, RTR: {}, RTS: {} } }\n";
  return "version: 1\n"
         "devices: { d: { name: auto } }\n"
         "pds: { other: { device: d } }\n"
         "mrs:\n"
         "  src: { pd: d, size: 64KiB, access: [local_write] }\n"
         "  dst: { pd: d, size: 64KiB, access: " + dst_access + " }\n"
         "cqs: { c: { device: d, depth: 256 } }\n"
         "qps:\n"
         "  qa: { pd: d, connect: qb, " + qp +
         "  qb: { pd: d, connect: qa, " + qp +
         "  qc: { pd: d, connect: qd, " + qp +
         "  qd: { pd: d, connect: qc, " + qp +
         "  qe: { pd: other, connect: qf, " + qp +
         "  qf: { pd: other, connect: qe, " + qp +
         "mws:\n" + mws + tail;
}

const std::string kW2 = "  w2: { type: 2, mr: dst, offset: 4KiB, length: 8KiB, access: [remote_write], bind_qp: qb }\n";

std::string write_through(const std::string& extra = "", const std::string& qp = "qa") {
  return "workloads:\n  wr: { qp: " + qp + ", op: rdma_write, local_mr: src, remote_mr: w2, size: 4KiB, iterations: 2" + extra + " }\n";
}

int position(const Plan& p, const std::string& verb, const std::string& object) {
  for (const auto& st : p.hosts.at(0).steps)
    if (st.verb == verb && st.object == object) return st.index;
  return -1;
}

}  // namespace

TEST_CASE("a window loads with its type, range and access; pd and length default from its MR") {
  auto l = load_only(scenario("  w: { type: 1, mr: dst, offset: 32KiB, access: [remote_write, remote_read], bind_qp: qd }\n", ""));
  REQUIRE_MESSAGE(l.scenario, l.dump());
  const auto* w = l.scenario->mw("w");
  REQUIRE(w);
  CHECK(w->type == 1);
  CHECK(w->pd.name == "d");
  CHECK(w->offset == 32 * 1024);
  CHECK(w->length == 32 * 1024);  // up to the MR's end
  CHECK(w->access == 0x6);
  CHECK(w->bind_qp.name == "qd");
}

TEST_CASE("a window type other than 1 or 2 is Q120 at the value") {
  std::string text = scenario("  w: { type: 3, mr: dst, bind_qp: qb }\n", "");
  auto l = load_only(text);
  const auto* d = l.one("Q120");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->loc.line == line_of(text, "type: 3"));
  CHECK(d->path == "mws.w.type");
}

TEST_CASE("a window without bind_qp is Q104 naming the key") {
  auto l = load_only(scenario("  w: { mr: dst }\n", ""));
  bool found = false;
  for (const auto* d : l.with_code("Q104")) found |= d->message == "memory window 'w' needs 'bind_qp'";
  CHECK_MESSAGE(found, l.dump());
}

TEST_CASE("without a timeline every window is bound first, before the smoke") {
  auto l = load_validate(scenario(kW2, write_through()));
  REQUIRE_MESSAGE(l.errors() == 0, l.dump());
  const auto& t = l.scenario->timeline;
  REQUIRE(t.size() >= 2);
  CHECK(t[0].kind == TimelineStep::Kind::BindMw);
  CHECK(t[0].mws.at(0).name == "w2");
  CHECK(t[1].kind == TimelineStep::Kind::Smoke);
}

TEST_CASE("Q530: the MR under a window must grant mw_bind") {
  std::string text = scenario(kW2, "", "[local_write, remote_write]");
  auto l = load_validate(text);
  const auto* d = l.one("Q530");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->path == "mws.w2.mr");
  CHECK(d->message == "MR 'dst' does not grant mw_bind: no window can be bound to it");
}

TEST_CASE("Q531: a window must lie inside its MR") {
  auto l = load_validate(scenario("  w: { mr: dst, offset: 60KiB, length: 8KiB, access: [remote_write], bind_qp: qb }\n", ""));
  const auto* d = l.one("Q531");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "window bytes 61440..69632 are not inside MR 'dst' (65536 bytes)");
}

TEST_CASE("Q531: a window of length 0 is an error, not the rest of its MR") {
  auto l = load_validate(scenario("  w: { mr: dst, offset: 4KiB, length: 0, access: [remote_write], bind_qp: qb }\n", ""));
  const auto* d = l.one("Q531");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->path == "mws.w.length");
  CHECK(d->message == "a window of 0 bytes grants no access");
  CHECK(d->loc.line == line_of(l.source.text(), "length: 0"));
}

TEST_CASE("a window without length reaches to its MR's end") {
  auto l = load_validate(scenario("  w: { mr: dst, offset: 4KiB, access: [remote_write], bind_qp: qb }\n", ""));
  REQUIRE_MESSAGE(l.errors() == 0, l.dump());
  CHECK(l.scenario->mw("w")->length == 60 * 1024);
}

TEST_CASE("Q532: a writable window needs a locally writable MR; window flags are remote only") {
  auto l = load_validate(scenario("  w: { mr: dst, access: [remote_write, local_write], bind_qp: qb }\n", "", "[mw_bind]"));
  auto ds = l.with_code("Q532");
  REQUIRE_MESSAGE(ds.size() == 2, l.dump());
  CHECK(ds[0]->message == "a window grants remote access only; local_write is not a window flag");
  CHECK(ds[1]->message == "a window granting remote_write or remote_atomic needs local_write on MR 'dst'");
}

TEST_CASE("Q206: a type 2 window binds through a QP of its own PD") {
  auto l = load_validate(scenario("  w: { mr: dst, access: [remote_write], bind_qp: qe }\n", ""));
  const auto* d = l.one("Q206");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->path == "mws.w.bind_qp");
  CHECK(d->message == "type 2 window 'w' is in PD 'd', its bind QP 'qe' in PD 'other'");
}

TEST_CASE("Q207: a type 2 window answers only its bind QP; a type 1 window any QP of its PD") {
  auto l = load_validate(scenario(kW2, write_through("", "qc")));
  const auto* d = l.one("Q207");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "type 2 window 'w2' is bound on QP 'qb', but this workload reaches it through 'qd'");
  auto type1 = load_validate(scenario(
      "  w2: { type: 1, mr: dst, offset: 4KiB, length: 8KiB, access: [remote_write], bind_qp: qb }\n", write_through("", "qc")));
  CHECK_MESSAGE(type1.errors() == 0, type1.dump());
}

TEST_CASE("Q533: an access past the window's end is an error unless the workload expects the access error") {
  auto l = load_validate(scenario(kW2, write_through(", offset: 6KiB")));
  const auto* d = l.one("Q533");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "offset 6144 + size 4096 runs past the end of window 'w2' (8192 bytes)");
  auto expected = load_validate(scenario(kW2, write_through(", offset: 6KiB, expect: { status: IBV_WC_REM_ACCESS_ERR }")));
  CHECK_MESSAGE(expected.errors() == 0, expected.dump());
}

TEST_CASE("Q532: the window's access must grant the workload's operation") {
  auto l = load_validate(scenario("  w2: { mr: dst, access: [remote_read], bind_qp: qb }\n", write_through()));
  const auto* d = l.one("Q532");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "rdma_write needs remote_write in the access of window 'w2'");
}

TEST_CASE("Q535: the timeline follows each window: bound, invalidated, bound twice") {
  std::string tail = write_through() + "timeline:\n  - workload: wr\n  - bind: w2\n  - bind: w2\n  - invalidate: w2\n  - workload: wr\n";
  auto l = load_validate(scenario(kW2, tail));
  auto ds = l.with_code("Q535");
  REQUIRE_MESSAGE(ds.size() == 3, l.dump());
  CHECK(ds[0]->message == "workload 'wr' goes through window 'w2', which is not bound yet");
  CHECK(ds[1]->message == "type 2 window 'w2' is bound already");
  CHECK(ds[2]->message == "workload 'wr' goes through window 'w2', which timeline[3] invalidated");
}

TEST_CASE("an unknown window in a bind step is Q201 naming the mws section") {
  auto l = load_validate(scenario(kW2, "timeline:\n  - bind: w9\n"));
  const auto* d = l.one("Q201");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "'w9' is not defined in mws");
  CHECK(d->path == "timeline[0].bind");
}

TEST_CASE("the plan allocates windows after the MRs, binds and publishes in one stage, deallocates them first") {
  std::string tail = write_through() + "timeline:\n  - bind: w2\n  - workload: wr\n  - invalidate: w2\n";
  auto l = load_validate(scenario(kW2, tail));
  REQUIRE_MESSAGE(l.errors() == 0, l.dump());
  Plan p = qpo::plan::build_plan(*l.checked);
  CHECK(position(p, "ibv_reg_mr", "dst") < position(p, "ibv_alloc_mw", "w2"));
  CHECK(position(p, "ibv_alloc_mw", "w2") < position(p, "ibv_create_qp", "qa"));
  // Before the QPs: a bound type 2 window holds its QP (rxe's ibv_destroy_qp waits for it).
  CHECK(position(p, "ibv_dealloc_mw", "w2") < position(p, "ibv_destroy_qp", "qb"));
  CHECK(position(p, "ibv_dealloc_mw", "w2") < position(p, "ibv_dereg_mr", "dst"));
  auto binds = steps_of(p, StepKind::BindMw);
  REQUIRE(binds.size() == 1);
  CHECK(binds[0]->verb == "ibv_post_send");  // type 2: IBV_WR_BIND_MW
  auto pubs = steps_of(p, StepKind::PublishMw);
  REQUIRE(pubs.size() == 1);
  CHECK(pubs[0]->stage == binds[0]->stage);
  CHECK(p.stages.at(static_cast<size_t>(binds[0]->stage)) == "bind w2");
  auto invs = steps_of(p, StepKind::InvalidateMw);
  REQUIRE(invs.size() == 1);
  bool local_inv = false;
  for (const auto& a : invs[0]->args) local_inv |= a.value == "IBV_WR_LOCAL_INV";
  CHECK(local_inv);
  // The responder prepares and verifies the MR behind the window, not the window.
  for (const auto* st : steps_of(p, StepKind::Verify)) CHECK(st->object == "dst");
}

TEST_CASE("a window's steps carry its id; the plan's window names its PD, MR and bind QP by id") {
  using qpo::plan::ObjectKind;
  std::string tail = write_through() + "timeline:\n  - bind: w2\n  - workload: wr\n  - invalidate: w2\n";
  auto l = load_validate(scenario(kW2, tail));
  REQUIRE_MESSAGE(l.errors() == 0, l.dump());
  Plan p = qpo::plan::build_plan(*l.checked);
  auto w2 = p.id_of(ObjectKind::Mw, "w2");
  REQUIRE(w2 != qpo::plan::kNoObject);
  for (auto kind : {StepKind::AllocMw, StepKind::BindMw, StepKind::InvalidateMw}) {
    REQUIRE_FALSE(steps_of(p, kind).empty());
    for (const auto* st : steps_of(p, kind)) CHECK(st->id == w2);
  }
  const auto& window = p.windows.at(w2);
  CHECK(window.name == "w2");
  CHECK(window.mr == p.id_of(ObjectKind::Mr, "dst"));
  CHECK(window.bind_qp == p.qp_id("qb"));
  CHECK(window.pd == p.id_of(ObjectKind::Pd, "d"));
  // The MR steps behind it carry the MR's id.
  auto dst = p.id_of(ObjectKind::Mr, "dst");
  REQUIRE_FALSE(steps_of(p, StepKind::PrepareData).empty());
  REQUIRE_FALSE(steps_of(p, StepKind::Verify).empty());
  for (const auto* st : steps_of(p, StepKind::PrepareData)) CHECK(st->id == dst);
  for (const auto* st : steps_of(p, StepKind::Verify)) CHECK(st->id == dst);
}

TEST_CASE("a type 1 window binds with ibv_bind_mw and is invalidated by a zero-length bind") {
  std::string tail = "timeline:\n  - bind: w\n  - invalidate: w\n";
  auto l = load_validate(scenario("  w: { type: 1, mr: dst, access: [remote_write], bind_qp: qd }\n", tail));
  REQUIRE_MESSAGE(l.errors() == 0, l.dump());
  Plan p = qpo::plan::build_plan(*l.checked);
  auto binds = steps_of(p, StepKind::BindMw);
  auto invs = steps_of(p, StepKind::InvalidateMw);
  REQUIRE(binds.size() == 1);
  REQUIRE(invs.size() == 1);
  CHECK(binds[0]->verb == "ibv_bind_mw");
  CHECK(invs[0]->verb == "ibv_bind_mw");
}

TEST_CASE("mw is a capability a scenario may require") {
  auto l = load_only("version: 1\nrequires: [mw]\nqps: {}\n");
  REQUIRE(l.scenario);
  CHECK(l.scenario->requires_caps == std::vector<std::string>{"mw"});
}

namespace {

// qa sends to qb with invalidate (`extra` after iterations), then writes through the window.
std::string send_inv(const std::string& window = "w2", const std::string& iterations = "1", const std::string& qp = "qa") {
  return "workloads:\n"
         "  inv: { qp: " + qp + ", op: send_with_inv, invalidate: " + window + ", local_mr: src, size: 64, iterations: " +
         iterations + " }\n"
         "  after: { qp: " + qp + ", op: rdma_write, local_mr: src, remote_mr: " + window +
         ", size: 64, iterations: 1, expect: { status: IBV_WC_REM_ACCESS_ERR } }\n";
}

}  // namespace

TEST_CASE("a send with invalidate of a bound type 2 window on the receiver's side validates; the plan names the window") {
  auto l = load_validate(scenario(kW2, send_inv() + "timeline:\n  - bind: w2\n  - workload: inv\n  - workload: after\n"));
  REQUIRE_MESSAGE(l.errors() == 0, l.dump());
  CHECK(l.scenario->workload("inv")->invalidate.name == "w2");
  Plan p = qpo::plan::build_plan(*l.checked);
  const Step* inv = nullptr;
  for (const auto* st : steps_of(p, StepKind::Workload))
    if (p.workload_of(*st).params.name == "inv") inv = st;
  REQUIRE(inv != nullptr);
  std::vector<std::string> args;
  for (const auto& a : inv->args) args.push_back(a.name + "=" + a.value);
  CHECK(std::find(args.begin(), args.end(), "op=IBV_WR_SEND_WITH_INV") != args.end());
  CHECK(std::find(args.begin(), args.end(), "invalidate_rkey=window w2's rkey") != args.end());
  CHECK(p.workload_of(*inv).invalidate_mw == p.id_of(qpo::plan::ObjectKind::Mw, "w2"));
  CHECK(std::find(args.begin(), args.end(),
                  "check=the receive completes with IBV_WC_WITH_INV, invalidated_rkey = w2's rkey") != args.end());
}

TEST_CASE("Q536: invalidate belongs to send_with_inv, and send_with_inv needs it") {
  auto l = load_validate(scenario(kW2, write_through(", invalidate: w2")));
  const auto* d = l.one("Q536");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "'invalidate:' belongs to op send_with_inv, not to op rdma_write");
  CHECK(d->path == "workloads.wr.invalidate");
  auto none = load_validate(scenario(kW2, "workloads:\n  s: { qp: qa, op: send_with_inv, local_mr: src, size: 64, iterations: 1 }\n"));
  const auto* n = none.one("Q536");
  REQUIRE_MESSAGE(n, none.dump());
  CHECK(n->message == "send_with_inv needs 'invalidate: <memory window>'");
}

TEST_CASE("Q537: a send with invalidate names a type 2 window") {
  auto l = load_validate(scenario("  w2: { type: 1, mr: dst, length: 4KiB, access: [remote_write], bind_qp: qb }\n", send_inv()));
  const auto* d = l.one("Q537");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "window 'w2' is type 1; a send with invalidate invalidates a type 2 window");
}

TEST_CASE("Q538: the window is in the receiving QP's PD") {
  auto l = load_validate(scenario("  w2: { pd: other, mr: dst, access: [remote_write], bind_qp: qf }\n", send_inv()));
  const auto* d = l.one("Q538");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "window 'w2' is in PD 'other', the receiving QP 'qb' in PD 'd'");
}

TEST_CASE("Q539: a send with invalidate needs the window bound at that point of the timeline") {
  auto l = load_validate(scenario(kW2, send_inv() + "timeline:\n  - workload: inv\n  - bind: w2\n  - workload: inv\n  - workload: inv\n"));
  auto ds = l.with_code("Q539");
  REQUIRE_MESSAGE(ds.size() == 2, l.dump());
  CHECK(ds[0]->message == "workload 'inv' invalidates window 'w2', which is not bound yet");
  CHECK(ds[1]->message == "workload 'inv' invalidates window 'w2', which timeline[2] invalidated");
  // After it, a write through the window is Q535 unless it expects the access error.
  auto after = load_validate(scenario(kW2, send_inv() + write_through().substr(std::string("workloads:\n").size()) + "timeline:\n  - bind: w2\n  - workload: inv\n  - workload: wr\n"));
  CHECK_MESSAGE(after.with_code("Q535").size() == 1, after.dump());
}

TEST_CASE("Q547: send with invalidate is for RC and XRC; Q548: once per bind") {
  auto uc = load_validate(
      "version: 1\n"
      "devices: { d: { name: auto } }\n"
      "mrs:\n"
      "  src: { pd: d, size: 64KiB, access: [local_write] }\n"
      "  dst: { pd: d, size: 64KiB, access: [local_write, mw_bind] }\n"
      "cqs: { c: { device: d, depth: 256 } }\n"
      "qps:\n"
      "  ua: { pd: d, type: UC, send_cq: c, recv_cq: c, connect: ub, states: { INIT: {}, RTR: {}, RTS: {} } }\n"
      "  ub: { pd: d, type: UC, send_cq: c, recv_cq: c, connect: ua, states: { INIT: {}, RTR: {}, RTS: {} } }\n"
      "mws:\n"
      "  w: { type: 2, mr: dst, access: [remote_write], bind_qp: ub }\n"
      "workloads:\n"
      "  inv: { qp: ua, op: send_with_inv, invalidate: w, local_mr: src, size: 64, iterations: 1 }\n");
  const auto* d = uc.one("Q547");
  REQUIRE_MESSAGE(d, uc.dump());
  CHECK(d->message == "UC QPs cannot do send_with_inv");
  auto twice = load_validate(scenario(kW2, send_inv("w2", "3")));
  const auto* t = twice.one("Q548");
  REQUIRE_MESSAGE(t, twice.dump());
  CHECK(t->message == "send_with_inv runs 3 times; the window is invalid after the first");
}
