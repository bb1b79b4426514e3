// Counted groups by name (scenario/groups.cpp): workloads, timeline steps and MRs name a
// QP group (`qp: cli`) or a slice of one (`cli[0:2]`); op loops become one workload per QP,
// scripts drive the members; MRs are counted too (count:, per_qp:).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "plan/plan.h"
#include "scenario_fixture.h"

using qpo::scenario::Group;
using qpo::scenario::TimelineStep;
using qpo::test::line_of;
using qpo::test::load_validate;

namespace {

// Two counted RC groups of 4 (cli.I connects srv.I) on one device; `mrs` and `tail` added.
std::string groups(const std::string& mrs, const std::string& tail) {
  return "version: 1\n"
         "devices: { d: { name: auto } }\n"
         "mrs:\n"
         "  src: { pd: d, size: 64KiB, access: [local_write] }\n"
         "  dst: { pd: d, size: 64KiB, access: [local_write, remote_write] }\n" +
         mrs +
         "cqs: { c: { device: d, depth: 2048 } }\n"
         "qps:\n"
         "  cli:\n"
         "    count: 4\n"
         "    pd: d\n"
         "    type: RC\n"
         "    send_cq: c\n"
         "    recv_cq: c\n"
         "    connect: srv\n"
         "    states: { INIT: { qp_access_flags: [remote_write] }, RTR: {}, RTS: {} }\n"
         "  srv:\n"
         "    count: 4\n"
         "    pd: d\n"
         "    type: RC\n"
         "    send_cq: c\n"
         "    recv_cq: c\n"
         "    connect: cli\n"
         "    states: { INIT: { qp_access_flags: [remote_write] }, RTR: {}, RTS: {} }\n" +
         tail;
}

std::vector<std::string> names(const std::vector<qpo::scenario::Ref>& refs) {
  std::vector<std::string> out;
  for (const auto& r : refs) out.push_back(r.name);
  return out;
}

}  // namespace

TEST_CASE("an op workload on a QP group is one workload per QP, named after the QP's index, run in one step") {
  auto l = load_validate(groups("", "workloads:\n"
                                    "  w: { qp: cli, op: rdma_write, local_mr: src, remote_mr: dst, size: 4KiB }\n"));
  REQUIRE_MESSAGE(l.errors() == 0, l.dump());
  const auto& s = *l.scenario;
  REQUIRE(s.workloads.size() == 4);
  CHECK(s.workloads[2].name == "w.2");
  CHECK(s.workloads[2].qp.name == "cli.2");
  CHECK(s.workloads[2].group == "w");
  CHECK(s.workloads[2].local_mr.name == "src");  // one MR for all: as written
  const auto* g = s.group("w", Group::Kind::Workload);
  REQUIRE(g);
  CHECK(g->count == 4);
  // Default order: smoke, then all four together.
  REQUIRE(s.timeline.size() == 2);
  CHECK(names(s.timeline[1].workloads) == std::vector<std::string>{"w.0", "w.1", "w.2", "w.3"});
}

TEST_CASE("a slice cli[1:3] takes members 1 and 2; cli[2:] and cli[:1] run to the ends") {
  auto l = load_validate(groups("", "workloads:\n"
                                    "  mid:  { qp: 'cli[1:3]', op: rdma_write, local_mr: src, remote_mr: dst }\n"
                                    "  tail: { qp: 'cli[3:]', op: send, local_mr: src }\n"
                                    "  head: { qp: 'cli[:1]', op: send, local_mr: src }\n"));
  REQUIRE_MESSAGE(l.errors() == 0, l.dump());
  std::vector<std::string> ws;
  for (const auto& w : l.scenario->workloads) ws.push_back(w.name + "=" + w.qp.name);
  CHECK(ws == std::vector<std::string>{"mid.1=cli.1", "mid.2=cli.2", "tail.3=cli.3", "head.0=cli.0"});
  const auto* g = l.scenario->group("mid", Group::Kind::Workload);
  REQUIRE(g);
  CHECK(g->first == 1);
  CHECK(g->count == 2);
}

TEST_CASE("a script workload on a QP group drives every member: the first is qp, the rest its other initiators") {
  auto l = load_validate(groups("", "workloads:\n"
                                    "  bw: { qp: cli, script: 'builtin:write_bw', local_mr: src, remote_mr: dst, "
                                    "args: { size: 4096, iterations: 10 } }\n"));
  REQUIRE_MESSAGE(l.errors() == 0, l.dump());
  REQUIRE(l.scenario->workloads.size() == 1);
  const auto& w = l.scenario->workloads[0];
  CHECK(w.qp.name == "cli.0");
  CHECK(names(w.more_qps) == std::vector<std::string>{"cli.1", "cli.2", "cli.3"});
  CHECK(w.group.empty());
}

TEST_CASE("a slice past the group's end is Q130 at the name, saying which members there are") {
  std::string text = groups("", "workloads:\n"
                                "  w: { qp: 'cli[2:9]', op: send }\n");
  auto l = load_validate(text);
  const auto* d = l.one("Q130");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "'cli[2:9]' reaches past the group");
  CHECK(d->hint == "'cli' has the members cli.0 .. cli.3");
  CHECK(d->path == "workloads.w.qp");
  CHECK(d->loc.line == line_of(text, "cli[2:9]"));
  CHECK(l.with_code("Q201").empty());  // reported once
}

TEST_CASE("an empty or malformed slice is Q130") {
  auto empty = load_validate(groups("", "workloads:\n  w: { qp: 'cli[3:1]', op: send }\n"));
  REQUIRE_MESSAGE(empty.one("Q130"), empty.dump());
  CHECK(empty.one("Q130")->message == "'cli[3:1]' selects no member (FROM must be below TO; TO is excluded)");
  auto bad = load_validate(groups("", "workloads:\n  w: { qp: 'cli[a:2]', op: send }\n"));
  REQUIRE_MESSAGE(bad.one("Q130"), bad.dump());
  CHECK(bad.one("Q130")->message == "'cli[a:2]' is not a slice: write NAME[FROM:TO] or NAME[I] with decimal numbers");
}

TEST_CASE("a slice of a QP that has no count: is Q131, listing the counted groups") {
  auto l = load_validate(groups("", "workloads:\n  w: { qp: 'srv.1[0:2]', op: send }\n"));
  const auto* d = l.one("Q131");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "'srv.1[0:2]' slices 'srv.1', which is not a counted QP group");
  CHECK(d->hint == "counted QP groups: cli, srv");
}

TEST_CASE("a group and one of its members named together is Q212, pointing at both") {
  std::string text = groups("", "workloads:\n"
                                "  bw: { qp: [cli, cli.2], script: 'builtin:write_bw', args: { iterations: 10 } }\n");
  auto l = load_validate(text);
  const auto* d = l.one("Q212");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "'cli.2' is named twice: by 'cli' and by 'cli.2'");
  CHECK(d->path == "workloads.bw.qp[1]");
  REQUIRE(d->related.size() == 1);
  CHECK(d->related[0].label == "named here first");
}

TEST_CASE("overlapping slices in one timeline step are Q212") {
  auto l = load_validate(groups("", "timeline:\n  - { qps: ['cli[0:3]', 'cli[2:4]'], to: ERR }\n"));
  const auto* d = l.one("Q212");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "'cli.2' is named twice: by 'cli[0:3]' and by 'cli[2:4]'");
  CHECK(d->path == "timeline[0].qps");
}

TEST_CASE("a timeline transition step on a group moves every member; a workload step runs a group's members") {
  auto l = load_validate(groups("", "workloads:\n"
                                    "  w: { qp: cli, op: rdma_write, local_mr: src, remote_mr: dst }\n"
                                    "timeline:\n"
                                    "  - { workload: 'w[0:2]' }\n"
                                    "  - { workload: w.3 }\n"
                                    "  - { qp: 'srv[1:3]', to: ERR }\n"));
  REQUIRE_MESSAGE(l.errors() == 0, l.dump());
  const auto& t = l.scenario->timeline;
  REQUIRE(t.size() == 3);
  CHECK(names(t[0].workloads) == std::vector<std::string>{"w.0", "w.1"});
  CHECK(names(t[1].workloads) == std::vector<std::string>{"w.3"});
  CHECK(t[2].kind == TimelineStep::Kind::Transition);
  REQUIRE(t[2].transitions.size() == 2);
  CHECK(t[2].transitions[0].qp == "srv.1");
  CHECK(t[2].transitions[1].qp == "srv.2");
}

TEST_CASE("count: on an MR gives name.0 .. name.(N-1); a group workload uses MR I for QP I") {
  auto l = load_validate(groups("  out: { pd: d, size: 4KiB, access: [local_write], count: 4 }\n"
                                "  in:  { pd: d, size: 4KiB, access: [local_write, remote_write], per_qp: srv }\n",
                                "workloads:\n"
                                "  w: { qp: 'cli[2:4]', op: rdma_write, local_mr: out, remote_mr: in, size: 1KiB }\n"));
  REQUIRE_MESSAGE(l.errors() == 0, l.dump());
  const auto& s = *l.scenario;
  CHECK(s.mr("out.3"));
  CHECK(s.mr("in.0"));
  CHECK_FALSE(s.mr("in"));
  REQUIRE(s.group("in", Group::Kind::Mr));
  CHECK(s.group("in", Group::Kind::Mr)->count == 4);  // per_qp: srv's count
  REQUIRE(s.workloads.size() == 2);
  CHECK(s.workloads[0].name == "w.2");
  CHECK(s.workloads[0].local_mr.name == "out.2");
  CHECK(s.workloads[0].remote_mr.name == "in.2");
  CHECK(s.workloads[1].remote_mr.name == "in.3");
}

TEST_CASE("an MR group whose count differs from the QP group's is Q213") {
  auto l = load_validate(groups("  out: { pd: d, size: 4KiB, access: [local_write], count: 3 }\n",
                                "workloads:\n  w: { qp: cli, op: rdma_write, local_mr: out, remote_mr: dst }\n"));
  const auto* d = l.one("Q213");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "'out' is a group of 3 MRs; QP group 'cli' has 4 QPs: the counts must match (QP I uses MR I)");
  CHECK(d->path == "workloads.w.local_mr");
  CHECK(l.with_code("Q201").empty());
}

TEST_CASE("an MR group on a single-QP workload is Q213 with the members as the hint") {
  auto l = load_validate(groups("  out: { pd: d, size: 4KiB, access: [local_write], count: 2 }\n",
                                "workloads:\n  w: { qp: cli.1, op: rdma_write, local_mr: out, remote_mr: dst }\n"));
  const auto* d = l.one("Q213");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "'out' is a group of 2 MRs; QP 'cli.1' is one QP, not a group");
  CHECK(d->hint == "name one of its MRs (out.0 .. out.1), or run an op workload on a QP group");
}

TEST_CASE("per_qp: naming something that is not a counted QP group is Q214; with count: it is Q132") {
  auto l = load_validate(groups("  out: { pd: d, size: 4KiB, access: [local_write], per_qp: src }\n", ""));
  const auto* d = l.one("Q214");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "'src' is not a counted QP group");
  CHECK(d->hint == "counted QP groups: cli, srv");
  auto both = load_validate(groups("  out: { pd: d, size: 4KiB, access: [local_write], per_qp: cli, count: 4 }\n", ""));
  REQUIRE_MESSAGE(both.one("Q132"), both.dump());
}

TEST_CASE("a member workload name already written by hand is Q105") {
  auto l = load_validate(groups("", "workloads:\n"
                                    "  w:   { qp: cli, op: send }\n"
                                    "  w.1: { qp: srv.1, op: send }\n"));
  const auto* d = l.one("Q105");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "workload name 'w.1' is written twice: by the group 'w' (one workload per QP) and by hand");
}

TEST_CASE("the plan has a workload step per member in one stage, and a verify per member on its own MR") {
  auto l = load_validate(groups("  in: { pd: d, size: 4KiB, access: [local_write, remote_write], per_qp: srv }\n",
                                "workloads:\n  w: { qp: cli, op: rdma_write, local_mr: src, remote_mr: in, size: 1KiB }\n"));
  REQUIRE_MESSAGE(l.errors() == 0, l.dump());
  auto p = qpo::plan::build_plan(*l.checked);
  std::vector<std::string> work, verify;
  int stage = -2;
  bool one_stage = true;
  for (const auto& st : p.hosts.at(0).steps) {
    if (st.kind == qpo::plan::StepKind::Workload) {
      work.push_back(p.workload_of(st).params.name);
      if (stage != -2 && st.stage != stage) one_stage = false;
      stage = st.stage;
    }
    if (st.kind == qpo::plan::StepKind::Verify) verify.push_back(st.object);
  }
  CHECK(work == std::vector<std::string>{"w.0", "w.1", "w.2", "w.3"});
  CHECK(one_stage);
  CHECK(verify == std::vector<std::string>{"in.0", "in.1", "in.2", "in.3"});
}

TEST_CASE("the members of a group workload writing one MR get one Q512 for the group, not one per pair") {
  auto l = load_validate(groups("", "workloads:\n  w: { qp: cli, op: rdma_write, local_mr: src, remote_mr: dst, size: 1KiB }\n"));
  REQUIRE_MESSAGE(l.errors() == 0, l.dump());
  const auto* d = l.one("Q512");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message ==
        "the workloads of group 'w' (one per QP, e.g. 'w.0' and 'w.1') run together and both write bytes 0..1023 of MR 'dst'");
  CHECK(d->hint == "give each QP its own MR: count: or per_qp: on the MR (MR I goes with QP I)");
}

// Sharing (util/shared_list.h): a counted group's members hold one list of transitions and
// their plan steps one list of arguments; what differs per member stays per member.

TEST_CASE("the members of a counted group share one elaborated list of transitions; the loaded model keeps its own") {
  auto l = load_validate(groups("", ""));
  REQUIRE_MESSAGE(l.errors() == 0, l.dump());
  const auto& model = l.checked->model();
  const auto* c0 = model.qp("cli.0");
  const auto* c3 = model.qp("cli.3");
  REQUIRE(c0);
  REQUIRE(c3);
  CHECK(c0->transitions.shares_with(c3->transitions));
  // Elaborated once for all: the defaults (RTR's dest_qp_num: peer) and masks are in the shared list.
  REQUIRE(c3->transitions.size() == 3);
  CHECK(c3->transitions[1].attr("dest_qp_num"));
  CHECK(c3->transitions[1].from == qpo::spec::QpState::INIT);
  CHECK(c3->transitions[1].mask != 0);
  // The scenario as loaded (validate took a copy) was not elaborated through the shared list.
  const auto* loaded = l.scenario->qp("cli.3");
  REQUIRE(loaded);
  CHECK_FALSE(loaded->transitions.shares_with(c3->transitions));
  CHECK_FALSE(loaded->transitions[1].attr("dest_qp_num"));
  // The two groups (cli, srv) are different templates: different lists.
  CHECK_FALSE(c0->transitions.shares_with(model.qp("srv.0")->transitions));
}

TEST_CASE("a timeline transition on some members gives those members their own list, judged from their own state") {
  auto l = load_validate(groups("", "timeline:\n"
                                    "  - { qp: 'srv[1:3]', to: ERR }\n"));
  REQUIRE_MESSAGE(l.errors() == 0, l.dump());
  const auto& model = l.checked->model();
  const auto& s0 = model.qp("srv.0")->transitions;
  const auto& s1 = model.qp("srv.1")->transitions;
  const auto& s2 = model.qp("srv.2")->transitions;
  CHECK(s0.shares_with(model.qp("srv.3")->transitions));
  CHECK_FALSE(s1.shares_with(s0));
  CHECK_FALSE(s1.shares_with(s2));
  REQUIRE(s1.size() == 4);
  CHECK(s1[3].to == qpo::spec::QpState::ERR);
  CHECK(s1[3].from == qpo::spec::QpState::RTS);
  CHECK(s1[3].predicted_ok);
}

TEST_CASE("a mistake in a counted group's states is reported once, at the template's key") {
  std::string y = groups("", "");
  y.replace(y.find("RTR: {}, RTS: {} }\n  srv:"), 7, "RTR: { sq_psn: 5 }");
  auto l = load_validate(y);
  auto q303 = l.with_code("Q303");
  REQUIRE_MESSAGE(q303.size() == 1, l.dump());
  CHECK(q303[0]->path == "qps.cli.states.RTR.sq_psn");
}

TEST_CASE("the plan's steps for a counted group's members share their argument lists") {
  auto l = load_validate(groups("", ""));
  REQUIRE_MESSAGE(l.errors() == 0, l.dump());
  auto p = qpo::plan::build_plan(*l.checked);
  std::vector<const qpo::plan::Step*> rtr, create;
  for (const auto& st : p.hosts.at(0).steps) {
    if (st.kind == qpo::plan::StepKind::Modify && st.to_state == "RTR" && st.object.rfind("cli.", 0) == 0) rtr.push_back(&st);
    if (st.kind == qpo::plan::StepKind::CreateQp) create.push_back(&st);
  }
  REQUIRE(rtr.size() == 4);
  CHECK(rtr[0]->args.shares_with(rtr[3]->args));
  CHECK(rtr[3]->object == "cli.3");
  REQUIRE(create.size() == 8);
  CHECK(create[0]->args.shares_with(create[7]->args));  // cli and srv are created alike
  CHECK(create[7]->object == "srv.3");
}
