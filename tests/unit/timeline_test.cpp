// The timeline: what runs after bring-up, as the loader reads it, the validator follows it
// and the planner turns it into stages of steps.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "plan/plan.h"
#include "plan_fixture.h"
#include "scenario/timeline.h"
#include "scenario_fixture.h"

using qpo::plan::Plan;
using qpo::plan::Step;
using qpo::plan::StepKind;
using qpo::scenario::TimelineStep;
using qpo::spec::QpState;
using qpo::test::load_only;
using qpo::test::load_validate;

using qpo::test::plan_of;
using qpo::test::steps_of;

namespace {

// An RC pair on one device; `qa_extra` goes under qa (e.g. a transitions: list), `tail` at
// the end (workloads:, timeline:).
std::string pair(const std::string& qa_extra, const std::string& tail) {
  return "version: 1\n"
         "devices: { d: { name: auto } }\n"
         "mrs:\n"
         "  ma:  { pd: d, size: 64KiB, access: [local_write] }\n"
         "  mb:  { pd: d, size: 64KiB, access: [local_write, remote_write, remote_read] }\n"
         "  mro: { pd: d, size: 4KiB, access: [local_write, remote_read] }\n"
         "cqs: { c: { device: d, depth: 1024 } }\n"
         "qps:\n"
         "  qa:\n"
         "    pd: d\n"
         "    type: RC\n"
         "    send_cq: c\n"
         "    recv_cq: c\n"
         "    connect: qb\n"
         "    states: { INIT: { qp_access_flags: [remote_write] }, RTR: {}, RTS: { max_rd_atomic: 4 } }\n" +
         qa_extra +
         "  qb:\n"
         "    pd: d\n"
         "    type: RC\n"
         "    send_cq: c\n"
         "    recv_cq: c\n"
         "    connect: qa\n"
         "    states: { INIT: { qp_access_flags: [remote_write, remote_read] }, RTR: { max_dest_rd_atomic: 4 }, RTS: {} }\n" +
         tail;
}

const std::string kWriteRead =
    "workloads:\n"
    "  write: { qp: qa, op: rdma_write, local_mr: ma, remote_mr: mb, size: 4KiB, iterations: 10 }\n"
    "  read:  { qp: qa, op: rdma_read,  local_mr: ma, remote_mr: mb, size: 4KiB, iterations: 10 }\n";

const std::string kDenied =
    "workloads:\n"
    "  denied: { qp: qa, op: rdma_write, local_mr: ma, remote_mr: mro, size: 64, iterations: 1,\n"
    "            expect: { status: IBV_WC_REM_ACCESS_ERR } }\n";

const Step* step_for(const Plan& p, StepKind kind, const std::string& workload) {
  for (const auto* st : steps_of(p, kind))
    if (p.workload_of(*st).params.name == workload) return st;
  return nullptr;
}

std::vector<TimelineStep::Kind> kinds(const qpo::scenario::Scenario& s) {
  std::vector<TimelineStep::Kind> out;
  for (const auto& t : s.timeline) out.push_back(t.kind);
  return out;
}

}  // namespace

TEST_CASE("without a timeline the loader writes the default order: smoke, workload waves, transition rounds, smoke") {
  auto l = load_validate(pair("    transitions: [ERR, RESET]\n", kWriteRead));
  REQUIRE_MESSAGE(l.errors() == 0, l.dump());
  using K = TimelineStep::Kind;
  // write and read share qa: two waves. ERR and RESET: two rounds. Then the recovery smoke.
  CHECK(kinds(*l.scenario) == std::vector<K>{K::Smoke, K::Workloads, K::Workloads, K::Transition, K::Transition, K::Smoke});
  CHECK_FALSE(l.scenario->timeline_given);
  CHECK(l.scenario->timeline.back().after_recovery);
  CHECK(l.scenario->timeline[1].workloads.at(0).name == "write");
  CHECK(l.scenario->timeline[2].workloads.at(0).name == "read");
}

TEST_CASE("a transition step joins its QP's transitions, after bring-up, with the step's path") {
  auto l = load_validate(pair("", "timeline:\n  - { qp: qa, to: SQD, attrs: { en_sqd_async_notify: 1 } }\n"));
  REQUIRE_MESSAGE(l.errors() == 0, l.dump());
  const auto& tr = l.qp("qa")->transitions;
  REQUIRE(tr.size() == 4);
  CHECK_FALSE(tr[3].bring_up);
  CHECK(tr[3].path == "timeline[0]");
  CHECK(tr[3].from == QpState::RTS);
  CHECK(tr[3].predicted_ok);
  REQUIRE(tr[3].attr("en_sqd_async_notify"));
  CHECK(tr[3].attr("en_sqd_async_notify")->number == 1);
  REQUIRE(l.scenario->timeline.size() == 1);
  CHECK(l.scenario->timeline[0].transitions.at(0).index == 3);
}

TEST_CASE("a timeline step that names two things is Q104 at the step") {
  auto l = load_only(pair("", "workloads:\n  w: { qp: qa, op: send, size: 64 }\ntimeline:\n  - { qp: qa, to: SQD, workload: w }\n"));
  const auto* d = l.one("Q104");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "a timeline step does one thing; this one names 2");
  CHECK(d->path == "timeline[0]");
}

TEST_CASE("a transitions: list beside a timeline is Q306: it would never run") {
  auto l = load_only(pair("    transitions: [ERR]\n", "timeline:\n  - smoke\n"));
  const auto* d = l.one("Q306");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "QP 'qa' lists 'transitions:' but the scenario has a 'timeline:'");
  CHECK(d->hint == "move it into the timeline as '- {qp: qa, to: ERR}'");
}

TEST_CASE("a misspelt step is one error with a did-you-mean: 'smok' is Q102, 'workloadz:' Q101 and no Q104") {
  auto l = load_validate(pair("", kWriteRead + "timeline:\n  - smok\n  - workloadz: write\n"));
  const auto* q102 = l.one("Q102");
  REQUIRE_MESSAGE(q102, l.dump());
  CHECK(q102->hint == "did you mean 'smoke'?");
  CHECK(q102->message.find("{link: up|down, on: DEVICE}") != std::string::npos);  // every kind is listed
  const auto* q101 = l.one("Q101");
  REQUIRE_MESSAGE(q101, l.dump());
  CHECK(q101->hint == "did you mean 'workload'?");
  CHECK_MESSAGE(l.with_code("Q104").empty(), l.dump());
}

TEST_CASE("a timeline naming an unknown workload or QP is Q201 with a suggestion") {
  auto l = load_validate(pair("", kWriteRead + "timeline:\n  - workload: wrte\n  - { qp: qx, to: ERR }\n"));
  auto q201 = l.with_code("Q201");
  REQUIRE_MESSAGE(q201.size() == 2, l.dump());
  CHECK(q201[0]->message == "'wrte' is not defined in workloads");
  CHECK(q201[0]->hint == "did you mean 'write'?");
  CHECK(q201[1]->message == "'qx' is not defined in qps");
}

TEST_CASE("an expected remote completion error moves both RC QPs to ERR for the steps after it") {
  auto l = load_validate(pair("", kDenied + "timeline:\n  - workload: denied\n  - { qps: [qa, qb], to: RESET }\n"));
  REQUIRE_MESSAGE(l.errors() == 0, l.dump());
  for (const char* name : {"qa", "qb"}) {
    CAPTURE(name);
    const auto* t = l.transition(name, QpState::RESET);
    REQUIRE(t);
    CHECK(t->from == QpState::ERR);
  }
}

TEST_CASE("Q309: a workload whose initiator is not in RTS is an error at its timeline step") {
  std::string y = pair("", kWriteRead + "timeline:\n  - { qp: qa, to: ERR }\n  - workload: write\n");
  auto l = load_validate(y);
  const auto* d = l.one("Q309");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "workload 'write' runs while its initiator QP 'qa' is in ERR, not RTS");
  CHECK(d->path == "timeline[1]");
  CHECK(d->loc.line == qpo::test::line_of(y, "- workload: write"));
  CHECK(d->hint == "bring 'qa' to RTS before this step, or expect the flush: `expect: { status: IBV_WC_WR_FLUSH_ERR }`");
}

TEST_CASE("Q309: a workload whose peer is not in RTR or RTS is an error at the workload") {
  std::string y = pair("", kWriteRead);
  auto at = y.find("RTR: { max_dest_rd_atomic: 4 }, RTS: {} }");
  y.replace(at, std::string("RTR: { max_dest_rd_atomic: 4 }, RTS: {} }").size(), "}");  // qb stops at INIT
  auto l = load_validate(y);
  auto q309 = l.with_code("Q309");
  REQUIRE_MESSAGE(q309.size() == 2, l.dump());  // write and read
  CHECK(q309[0]->message == "workload 'write' runs while its peer QP 'qb' is in INIT, not RTR, RTS, SQD or SQE");
  CHECK(q309[0]->path == "workloads.write");
}

TEST_CASE("Q309: a counted group's mistake is one error, and its template's own error none") {
  auto group = [](const std::string& srv_states) {
    return "version: 1\n"
           "devices: { d: { name: auto } }\n"
           "mrs:\n"
           "  src: { pd: d, size: 64KiB, access: [local_write] }\n"
           "  dst: { pd: d, size: 64KiB, access: [local_write, remote_write], per_qp: srv }\n"
           "cqs: { c: { device: d, depth: 1024 } }\n"
           "qps:\n"
           "  cli: { count: 4, pd: d, type: RC, send_cq: c, recv_cq: c, connect: srv,\n"
           "         states: { INIT: { qp_access_flags: [remote_write] }, RTR: {}, RTS: {} } }\n"
           "  srv: { count: 4, pd: d, type: RC, send_cq: c, recv_cq: c, connect: cli,\n"
           "         states: " + srv_states + " }\n"
           "workloads:\n"
           "  write: { qp: cli, op: rdma_write, local_mr: src, remote_mr: dst, size: 4KiB, iterations: 10 }\n";
  };
  auto init_only = load_validate(group("{ INIT: { qp_access_flags: [remote_write] } }"));
  auto q309 = init_only.with_code("Q309");
  REQUIRE_MESSAGE(q309.size() == 1, init_only.dump());
  CHECK(q309[0]->message == "workload 'write.0' runs while its peer QP 'srv.0' is in INIT, not RTR, RTS, SQD or SQE");
  auto misspelt = load_validate(group("{ INIT: { qp_access_flags: [remote_write] }, RTR: {}, RTX: {} }"));
  CHECK_MESSAGE(misspelt.one("Q106"), misspelt.dump());
  CHECK_MESSAGE(misspelt.with_code("Q309").empty(), misspelt.dump());
}

TEST_CASE("Q309: a peer in SQD still receives: a write into a drained QP is no error") {
  auto l = load_validate(pair("", kWriteRead +
                                      "  back: { qp: qb, op: rdma_write, local_mr: mb, remote_mr: ma, size: 64, iterations: 1 }\n"
                                      "timeline:\n  - { qp: qa, to: SQD }\n  - workload: back\n  - { qp: qa, to: RTS }\n"));
  CHECK_MESSAGE(l.with_code("Q309").empty(), l.dump());
}

TEST_CASE("Q309: expect: cannot excuse an initiator below RTS, and expecting success excuses nothing") {
  std::string y = pair("", kWriteRead + "timeline:\n  - { qp: qa, to: ERR }\n  - workload: write\n");
  std::string success = y;
  success.replace(success.find("iterations: 10 }"), 16, "iterations: 10, expect: { status: IBV_WC_SUCCESS } }");
  auto l = load_validate(success);
  CHECK_MESSAGE(l.one("Q309"), l.dump());
  std::string rtr = pair("", kWriteRead);
  rtr.replace(rtr.find("RTS: { max_rd_atomic: 4 }"), 25, "");  // qa stops at RTR
  rtr.replace(rtr.find("iterations: 10 }"), 16, "iterations: 10, expect: { status: IBV_WC_WR_FLUSH_ERR } }");
  auto l2 = load_validate(rtr);
  auto q309 = l2.with_code("Q309");
  REQUIRE_MESSAGE(!q309.empty(), l2.dump());
  CHECK(q309[0]->message == "workload 'write' runs while its initiator QP 'qa' is in RTR, not RTS");
}

TEST_CASE("Q309: not for a workload that expects a completion error, nor after a recovery to RTS") {
  auto expected = load_validate(pair("", kDenied + "timeline:\n  - { qp: qa, to: ERR }\n  - workload: denied\n"));
  CHECK_MESSAGE(expected.with_code("Q309").empty(), expected.dump());
  auto recovered = load_validate(pair("", kWriteRead +
                                              "timeline:\n  - { qps: [qa, qb], to: ERR }\n  - { qps: [qa, qb], to: RESET }\n"
                                              "  - { qps: [qa, qb], to: INIT }\n  - { qps: [qa, qb], to: RTR }\n"
                                              "  - { qps: [qa, qb], to: RTS }\n  - workload: write\n"));
  CHECK_MESSAGE(recovered.with_code("Q309").empty(), recovered.dump());
}

TEST_CASE("a transition the timeline makes impossible is reported at its own line, once") {
  // SQD after the expected error: ERR->SQD is not a transition; the RESET after it is fine.
  std::string y = pair("", kDenied + "timeline:\n  - workload: denied\n  - { qp: qa, to: SQD }\n  - { qp: qa, to: RESET }\n");
  auto l = load_validate(y);
  auto q301 = l.with_code("Q301");
  REQUIRE_MESSAGE(q301.size() == 1, l.dump());
  CHECK(q301[0]->message == "RC ERR->SQD is not a valid transition");
  CHECK(q301[0]->loc.line == qpo::test::line_of(y, "to: SQD"));
}

TEST_CASE("a bare recovery path re-enters INIT with the QP's own qp_access_flags, not the default 0") {
  auto l = load_validate(pair("    transitions: [ERR, RESET, INIT]\n", ""));
  REQUIRE_MESSAGE(l.errors() == 0, l.dump());
  const auto& tr = l.qp("qa")->transitions;
  REQUIRE(tr.size() == 6);
  CHECK(tr[5].to == QpState::INIT);
  const auto* f = tr[5].attr("qp_access_flags");
  REQUIRE(f);
  CHECK(f->number == 0x2);  // IBV_ACCESS_REMOTE_WRITE, from states.INIT
  CHECK_FALSE(f->from_default);
}

TEST_CASE("validation elaborates a copy: the scenario as loaded keeps what the user wrote") {
  auto l = load_validate(pair("    transitions: [ERR, RESET, INIT]\n", ""));
  REQUIRE_MESSAGE(l.errors() == 0, l.dump());
  // The checked model has the recovery INIT's inherited flags; the loaded scenario does not.
  REQUIRE(l.checked->model().qp("qa")->transitions.size() == 6);
  CHECK(l.checked->model().qp("qa")->transitions[5].attr("qp_access_flags"));
  const auto& loaded = l.scenario->qp("qa")->transitions;
  REQUIRE(loaded.size() == 6);
  CHECK(loaded[5].attr("qp_access_flags") == nullptr);
  CHECK(loaded[5].mask == 0);
}

TEST_CASE("attributes a recovery step writes win over the QP's own states:") {
  auto l = load_validate(pair("", "timeline:\n  - { qp: qa, to: RESET }\n  - { qp: qa, to: INIT, attrs: { qp_access_flags: [remote_read] } }\n"));
  REQUIRE_MESSAGE(l.errors() == 0, l.dump());
  const auto* f = l.qp("qa")->transitions.back().attr("qp_access_flags");
  REQUIRE(f);
  CHECK(f->number == 0x4);  // IBV_ACCESS_REMOTE_READ
}

TEST_CASE("a read after a write on the same MR expects the written bytes and gets no prepare step") {
  Plan p = plan_of(pair("", kWriteRead + "timeline:\n  - workload: write\n  - workload: read\n"));
  const auto* write = step_for(p, StepKind::Workload, "write");
  const auto* read = step_for(p, StepKind::Workload, "read");
  const auto* verify_read = step_for(p, StepKind::Verify, "read");
  REQUIRE(write);
  REQUIRE(read);
  REQUIRE(verify_read);
  CHECK(read->extra().data_seed == write->extra().data_seed);
  CHECK(verify_read->extra().data_seed == write->extra().data_seed);
  CHECK(step_for(p, StepKind::PrepareData, "write"));
  CHECK_FALSE(step_for(p, StepKind::PrepareData, "read"));
}

TEST_CASE("a read of bytes nothing wrote has the responder fill them first") {
  Plan p = plan_of(pair("", kWriteRead + "timeline:\n  - workload: read\n"));
  const auto* prep = step_for(p, StepKind::PrepareData, "read");
  REQUIRE(prep);
  CHECK(prep->extra().fill_remote);
  CHECK(prep->extra().data_seed == step_for(p, StepKind::Verify, "read")->extra().data_seed);
}

TEST_CASE("each workload is verified in its own stage, before the next workload runs") {
  Plan p = plan_of(pair("", kWriteRead + "timeline:\n  - workload: write\n  - workload: read\n"));
  const auto* verify_write = step_for(p, StepKind::Verify, "write");
  const auto* read = step_for(p, StepKind::Workload, "read");
  REQUIRE(verify_write);
  REQUIRE(read);
  CHECK(verify_write->stage < read->stage);
  CHECK(verify_write->index < read->index);
}

TEST_CASE("a transition's follow-ups are plan steps: flush after ERR, receives after RESET->INIT, SQ drained") {
  Plan p = plan_of(pair("", "timeline:\n"
                            "  - { qp: qa, to: SQD, attrs: { en_sqd_async_notify: 1 } }\n"
                            "  - { qp: qa, to: ERR }\n"
                            "  - { qp: qa, to: RESET }\n"
                            "  - { qp: qa, to: INIT }\n"));
  auto waits = steps_of(p, StepKind::WaitEvent);
  REQUIRE(waits.size() == 1);
  CHECK(waits[0]->args.at(0).value == "IBV_EVENT_SQ_DRAINED");
  CHECK(steps_of(p, StepKind::FlushPoll).size() == 1);
  auto reposts = steps_of(p, StepKind::RepostRecv);
  REQUIRE(reposts.size() == 1);
  CHECK(reposts[0]->object == "qa");
}

TEST_CASE("an expected completion error is followed by a state read-back of both RC QPs") {
  Plan p = plan_of(pair("", kDenied + "timeline:\n  - workload: denied\n"));
  auto reads = steps_of(p, StepKind::ReadState);
  REQUIRE(reads.size() == 2);
  CHECK(reads[0]->object == "qa");
  CHECK(reads[1]->object == "qb");
  CHECK(reads[0]->args.at(0).value == "IBV_QPS_ERR");
  CHECK_FALSE(step_for(p, StepKind::Verify, "denied"));
}

TEST_CASE("a barrier and a pause are stages of their own, in timeline order") {
  Plan p = plan_of(pair("", kWriteRead + "timeline:\n  - workload: write\n  - barrier: half\n  - pause: 5ms\n  - workload: read\n"));
  std::vector<std::string> want = {"prepare write", "workload write", "verify write", "barrier half", "pause 5 ms",
                                   "workload read", "verify read"};
  CHECK(p.stages == want);
  auto pauses = steps_of(p, StepKind::Pause);
  REQUIRE(pauses.size() == 1);
  CHECK(pauses[0]->extra().pause_ms == 5);
}

TEST_CASE("`qpo run --no-smoke` drops the default order's smoke, not a timeline's own") {
  auto plain = load_validate(pair("", ""));
  CHECK(steps_of(qpo::plan::build_plan(*plain.checked, {false}), StepKind::SmokeSend).empty());
  auto written = load_validate(pair("", "timeline:\n  - smoke\n"));
  CHECK(steps_of(qpo::plan::build_plan(*written.checked, {false}), StepKind::SmokeSend).size() == 2);
}

TEST_CASE("workloads that run together and write the same bytes of an MR are warning Q512 at the step") {
  std::string y = pair("", kWriteRead + "  other: { qp: qb, op: rdma_write, local_mr: mro, remote_mr: mb, size: 64, offset: 4032 }\n"
                           "timeline:\n  - workloads: [write, other]\n");
  auto l = load_validate(y);
  const auto* d = l.one("Q512");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "workloads 'write' and 'other' run together and both write bytes 4032..4095 of MR 'mb'");
  CHECK(d->loc.line == qpo::test::line_of(y, "workloads: [write, other]"));
}

TEST_CASE("workloads that run together on separate bytes of one MR get no Q512") {
  auto l = load_validate(pair("", kWriteRead + "  other: { qp: qb, op: rdma_write, local_mr: mro, remote_mr: mb, size: 64, offset: 4096 }\n"
                                  "timeline:\n  - workloads: [write, other]\n"));
  CHECK_MESSAGE(l.with_code("Q512").empty(), l.dump());
}

TEST_CASE("two op workloads that run together from one QP are error Q513 at the step") {
  std::string y = pair("", kWriteRead + "timeline:\n  - workloads: [write, read]\n");
  auto l = load_validate(y);
  const auto* d = l.one("Q513");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "workloads 'write' and 'read' run together from QP 'qa'");
  CHECK(d->loc.line == qpo::test::line_of(y, "workloads: [write, read]"));
}

TEST_CASE("op workloads that run together from two QPs are no Q513") {
  auto l = load_validate(pair("", kWriteRead + "  other: { qp: qb, op: rdma_write, local_mr: mro, remote_mr: mb, size: 64, offset: 4096 }\n"
                                  "timeline:\n  - workloads: [write, other]\n"));
  CHECK_MESSAGE(l.with_code("Q513").empty(), l.dump());
}

TEST_CASE("an offset that runs past the end of an MR is Q510 at the offset") {
  std::string y = pair("", "workloads:\n  w: { qp: qa, op: rdma_write, local_mr: ma, remote_mr: mro, size: 64, offset: 4090 }\n");
  auto l = load_validate(y);
  const auto* d = l.one("Q510");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "offset 4090 + size 64 runs past the end of MR 'mro' (4096 bytes)");
  CHECK(d->loc.line == qpo::test::line_of(y, "offset: 4090"));
}

TEST_CASE("a read expects what a write left at the same offset, not what another write left elsewhere") {
  Plan p = plan_of(pair("", "workloads:\n"
                            "  w0: { qp: qa, op: rdma_write, local_mr: ma, remote_mr: mb, size: 1KiB }\n"
                            "  w1: { qp: qb, op: rdma_write, local_mr: mro, remote_mr: mb, size: 1KiB, offset: 1KiB }\n"
                            "  r0: { qp: qa, op: rdma_read, local_mr: ma, remote_mr: mb, size: 1KiB }\n"
                            "  r2: { qp: qa, op: rdma_read, local_mr: ma, remote_mr: mb, size: 1KiB, offset: 2KiB }\n"
                            "timeline:\n  - workloads: [w0, w1]\n  - workload: r0\n  - workload: r2\n"));
  CHECK(step_for(p, StepKind::Workload, "r0")->extra().data_seed == step_for(p, StepKind::Workload, "w0")->extra().data_seed);
  CHECK_FALSE(step_for(p, StepKind::PrepareData, "r0"));
  const auto* fill = step_for(p, StepKind::PrepareData, "r2");  // nothing wrote bytes 2048..
  REQUIRE(fill);
  CHECK(fill->extra().fill_remote);
}

TEST_CASE("a read over a write's bytes that is not a read-back of them is warning Q516 at the read (issue 30 item 17c)") {
  std::string y = pair("", "workloads:\n"
                           "  w: { qp: qa, op: rdma_write, local_mr: ma, remote_mr: mb, size: 4KiB }\n"
                           "  r: { qp: qa, op: rdma_read,  local_mr: ma, remote_mr: mb, size: 8KiB }\n"
                           "timeline:\n  - workload: w\n  - workload: r\n");
  auto l = load_validate(y);
  CHECK_MESSAGE(l.errors() == 0, l.dump());
  const auto* d = l.one("Q516");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->severity == qpo::diag::Severity::Warning);
  CHECK(d->message == "workload 'r' reads bytes 0..8191 of 'mb', where 'w' wrote bytes 0..4095: not a read-back of them, "
                      "so the MR is refilled with the read's pattern first and what 'w' wrote is overwritten");
  CHECK(d->hint == "read from offset 0 with size <= 4096 to check the write, or give the read an offset: past the written bytes");
  CHECK(d->path == "workloads.r");
  CHECK(d->loc.line == qpo::test::line_of(y, "  r: {"));
  // The plan does refill it: the warning describes what runs.
  const auto plan = plan_of(y);  // kept: the step points into it
  const auto* prep = step_for(plan, StepKind::PrepareData, "r");
  REQUIRE(prep);
  CHECK(prep->extra().fill_remote);
}

TEST_CASE("a read at another offset that overlaps a write is Q516; a read-back and a read of other bytes are not") {
  auto overlapping = load_validate(pair("", "workloads:\n"
                                            "  w: { qp: qa, op: rdma_write, local_mr: ma, remote_mr: mb, size: 4KiB }\n"
                                            "  r: { qp: qa, op: rdma_read,  local_mr: ma, remote_mr: mb, size: 1KiB, offset: 2KiB }\n"
                                            "timeline:\n  - workload: w\n  - workload: r\n"));
  CHECK_MESSAGE(overlapping.one("Q516"), overlapping.dump());
  auto read_back = load_validate(pair("", kWriteRead + "timeline:\n  - workload: write\n  - workload: read\n"));
  CHECK_MESSAGE(read_back.with_code("Q516").empty(), read_back.dump());
  auto elsewhere = load_validate(pair("", "workloads:\n"
                                          "  w: { qp: qa, op: rdma_write, local_mr: ma, remote_mr: mb, size: 4KiB }\n"
                                          "  r: { qp: qa, op: rdma_read,  local_mr: ma, remote_mr: mb, size: 4KiB, offset: 4KiB }\n"
                                          "timeline:\n  - workload: w\n  - workload: r\n"));
  CHECK_MESSAGE(elsewhere.with_code("Q516").empty(), elsewhere.dump());
}

TEST_CASE("without a timeline a script on several QPs waits for an op workload on any of them, or their peers") {
  auto rc = [](const std::string& name, const std::string& peer) {
    return "  " + name + ": { pd: d, type: RC, send_cq: c, recv_cq: c, connect: " + peer +
           ", states: { INIT: { qp_access_flags: [remote_write] }, RTR: {}, RTS: {} } }\n";
  };
  auto l = load_validate(
      "version: 1\nname: waves\n"
      "devices: { d: { name: auto, port: 1 } }\n"
      "mrs:\n"
      "  ma: { pd: d, size: 4KiB, access: [local_write] }\n"
      "  mb: { pd: d, size: 4KiB, access: [local_write, remote_write] }\n"
      "cqs: { c: { device: d, depth: 1024 } }\n"
      "qps:\n" + rc("qa", "qb") + rc("qb", "qa") + rc("qc", "qd") + rc("qd", "qc") +
      "workloads:\n"
      "  write: { qp: qd, op: rdma_write, local_mr: ma, remote_mr: mb, size: 4KiB, iterations: 10 }\n"
      "  both: { qp: [qa, qc], script: 'builtin:write_bw', local_mr: ma, remote_mr: mb }\n");
  REQUIRE_MESSAGE(l.errors() == 0, l.dump());
  // `both` drives qc, the peer of the op workload's qd: not in the same wave (it used to look
  // at qa and qb only, and ran together with `write` by the plan, apart by the run).
  CHECK(qpo::scenario::workload_waves(*l.scenario) == std::vector<int>{0, 1});
}
