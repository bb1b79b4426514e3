// Facts exec needs, lowered into the plan so it never reads the scenario: what the devices
// must do (Plan::needs, plan/device_needs.h) and the faults' netem settings (Plan::faults).
#include <doctest/doctest.h>

#include <string>

#include "golden/plan_of_file.h"
#include "plan/declared_waits.h"

using qpo::test::plan_of_file;

TEST_CASE("an IPv6 multicast group: its members counted per device, and who sends to it from which device") {
  auto p = plan_of_file("tests/scenarios/two-guests/ud-multicast-ipv6.yaml");
  using qpo::plan::ObjectKind;
  CHECK(p.needs.mcast_attachments ==
        std::map<qpo::plan::ObjectId, uint64_t>{{p.id_of(ObjectKind::Device, "da"), 1}, {p.id_of(ObjectKind::Device, "db"), 1}});
  REQUIRE(p.needs.ipv6_mcast_sends.size() == 1);
  CHECK(p.needs.ipv6_mcast_sends[0].group == "g6");
  CHECK(p.needs.ipv6_mcast_sends[0].gid_text == "ff0e::1234");
  CHECK(p.needs.ipv6_mcast_sends[0].device_id == p.id_of(ObjectKind::Device, "da"));
  CHECK(p.needs.caps == std::vector<std::string>{"ud"});  // UD QPs; multicast is checked by its own numbers
}

TEST_CASE("ODP MRs: odp is needed, with the types of the QPs on their PD") {
  auto p = plan_of_file("tests/scenarios/run/rc-odp-unsupported.yaml");
  CHECK(std::find(p.needs.caps.begin(), p.needs.caps.end(), "odp") != p.needs.caps.end());
  CHECK(p.needs.odp_qp_types == std::set<qpo::spec::QpType>{qpo::spec::QpType::RC});
  CHECK_FALSE(p.needs.mw_type2);
}

TEST_CASE("a type 2 memory window is noted beside the mw capability") {
  auto p = plan_of_file("scenarios/rc-memory-windows.yaml");
  CHECK(std::find(p.needs.caps.begin(), p.needs.caps.end(), "mw") != p.needs.caps.end());
  CHECK(p.needs.mw_type2);
  CHECK(p.needs.mcast_attachments.empty());
}

TEST_CASE("faults: each entry's device, window and netem settings, in percent and microseconds") {
  auto loss = plan_of_file("tests/scenarios/faults/rc-write-loss-1pct.yaml");
  REQUIRE(loss.faults.size() == 1);
  CHECK(loss.faults[0].name == "lossy");
  CHECK(loss.faults[0].device == "da");
  CHECK(loss.faults[0].during == "traffic");
  CHECK(loss.faults[0].loss == doctest::Approx(1.0));
  CHECK(loss.faults[0].delay_us == 0);
  auto slow = plan_of_file("tests/scenarios/run/fault-root-qdisc.yaml");
  REQUIRE(slow.faults.size() == 1);
  CHECK(slow.faults[0].during == "all");
  CHECK(slow.faults[0].delay_us == 100);
  CHECK(slow.faults[0].loss == 0);
}

TEST_CASE("declared waits: an expected CM event's `within`, summed over the steps of one host's stage") {
  auto p = plan_of_file("tests/scenarios/run/two-host-cm-outcomes.yaml");
  // qx's ADDR_ERROR within 2 s, qt's timeout within 3 s and qu's UNREACHABLE within 150 s: host
  // a waits for them one after another, in one stage, so the phase timeout counts beyond 155 s.
  CHECK(qpo::plan::longest_stage_wait_ms(p) == 155000);
}

TEST_CASE("declared waits: an expected CM event without `within` waits up to the phase timeout, counted as such") {
  auto p = plan_of_file("scenarios/two-host-cm-reject.yaml");
  // qa and qn both expect REJECTED with no `within`: each may wait the whole phase timeout.
  CHECK(qpo::plan::longest_stage_wait_ms(p, {.phase_timeout_ms = 30000, .event_timeout_ms = 5000}) == 60000);
}

TEST_CASE("declared waits: a script workload's duration, in seconds as the built-ins take it") {
  CHECK(qpo::plan::longest_stage_wait_ms(plan_of_file("scenarios/rc-read-bw-duration-lua.yaml")) == 1000);
}

TEST_CASE("declared waits: a plan without any has none") {
  CHECK(qpo::plan::longest_stage_wait_ms(plan_of_file("scenarios/rc-write-pair.yaml")) == 0);
}

TEST_CASE("declared waits: a pause is one") {
  CHECK(qpo::plan::longest_stage_wait_ms(plan_of_file("scenarios/two-host-timeline.yaml")) == 50);
}

namespace {
const qpo::plan::WorkloadRun* workload_named(const qpo::plan::Plan& p, const std::string& name) {
  for (const auto& w : p.workloads)
    if (w.params.name == name) return &w;
  return nullptr;
}
}  // namespace

TEST_CASE("a workload through a memory window: its bytes are at the window's offset plus its own in the MR") {
  auto p = plan_of_file("scenarios/rc-memory-windows.yaml");
  const auto* w = workload_named(p, "through_w2");
  REQUIRE(w != nullptr);
  CHECK(w->remote_is_window);
  CHECK(w->remote_offset == 4096 + 1024);  // w2 opens dst at 4 KiB; the write is 1 KiB into it
  CHECK(w->receivers == std::vector<std::string>{"qb"});
  CHECK(w->params.iterations == 20);
}

TEST_CASE("a multicast workload: the group's members receive, in file order") {
  auto p = plan_of_file("scenarios/ud-multicast.yaml");
  const auto* w = workload_named(p, "to_group");
  REQUIRE(w != nullptr);
  CHECK(w->receivers == std::vector<std::string>{"m1", "m2", "m3"});
  CHECK_FALSE(w->remote_is_window);
  REQUIRE(p.mcast_group("g") != nullptr);
  CHECK(p.mcast_group("g")->qkey == 0x5eed);
}

TEST_CASE("a script workload across hosts: its spec, its reporter's host, each QP's peer") {
  auto p = plan_of_file("scenarios/two-host-write-bw-lua.yaml");
  const auto* w = workload_named(p, "write_bw");
  REQUIRE(w != nullptr);
  CHECK(w->reporter_host == "a");
  CHECK(w->script.script == "builtin:write_bw");
  REQUIRE(w->script.args.find("size") != nullptr);
  CHECK(w->script.args.find("size")->to_json() == "65536");
  REQUIRE(w->script.workers.size() == 2);  // qa's initiator and qb's target
  // Each worker's QP by id, with its peer's id (Plan::peer_id's space).
  REQUIRE(w->worker_qps.size() == 2);
  REQUIRE(w->worker_qps[0].size() == 1);
  REQUIRE(w->worker_qps[1].size() == 1);
  CHECK(w->worker_qps[0][0].name == "qa");
  CHECK(w->worker_qps[0][0].id == p.qp_id("qa"));
  CHECK(w->worker_qps[0][0].peer == p.peer_id("qb"));
  CHECK(w->worker_qps[1][0].name == "qb");
  CHECK(w->worker_qps[1][0].peer == p.peer_id("qa"));
  // Every step of the workload, on both hosts, points at this one entry.
  for (const auto& h : p.hosts)
    for (const auto& s : h.steps)
      if (s.kind == qpo::plan::StepKind::Workload && s.object == "write_bw") CHECK(&p.workload_of(s) == w);
}

namespace {
const qpo::plan::Step* step_of(const qpo::plan::Plan& p, qpo::plan::StepKind kind, const std::string& object) {
  for (const auto& h : p.hosts)
    for (const auto& s : h.steps)
      if (s.kind == kind && s.object == object) return &s;
  return nullptr;
}
}  // namespace

TEST_CASE("bring-up receives: the step carries its count, the smoke's share where scripts own the queue") {
  auto p = plan_of_file("scenarios/two-host-write-bw-lua.yaml");
  const auto* qa = step_of(p, qpo::plan::StepKind::PostRecv, "qa");
  REQUIRE(qa != nullptr);
  CHECK(qa->count == 1);  // qb alone sends it the smoke message; max_recv_wr is 16
  auto op = plan_of_file("scenarios/rc-memory-windows.yaml");
  const auto* qb = step_of(op, qpo::plan::StepKind::PostRecv, "qb");
  REQUIRE(qb != nullptr);
  CHECK(qb->count == 16);  // an op workload's peer keeps the whole queue
}

TEST_CASE("receive slots: as big as the largest send a workload aims at the QP, through its group too") {
  auto p = plan_of_file("scenarios/ud-multicast.yaml");
  const auto* m1 = step_of(p, qpo::plan::StepKind::RegSlots, "qpo.slots.m1");
  REQUIRE(m1 != nullptr);
  CHECK(m1->count == 1024 + 64);  // to_group sends 1 KiB to every member; 64 B for the GRH and more
  const auto* tx = step_of(p, qpo::plan::StepKind::RegSlots, "qpo.slots.tx");
  REQUIRE(tx != nullptr);
  CHECK(tx->count == 256 + 64);  // nothing is sent to the sender: the smoke's size
}

// The facts a QP is made and named by (plan/object_facts.h): exec reads these, not the scenario.
TEST_CASE("QP facts: an SRQ receiver's ids, caps and peer, by the QP's id") {
  auto p = plan_of_file("scenarios/rc-srq.yaml");
  REQUIRE(p.qps.size() == p.qp_count());
  const auto& r1 = p.qps.at(p.qp_id("r1"));
  CHECK(r1.name == "r1");
  CHECK(r1.type == qpo::spec::QpType::RC);
  CHECK(r1.type_name == "RC");
  CHECK(r1.srq == p.id_of(qpo::plan::ObjectKind::Srq, "srq0"));
  CHECK(r1.send_cq == p.id_of(qpo::plan::ObjectKind::Cq, "scq"));
  CHECK(r1.recv_cq == p.id_of(qpo::plan::ObjectKind::Cq, "rcq"));
  CHECK(r1.pd == p.id_of(qpo::plan::ObjectKind::Pd, "pa"));
  CHECK(r1.xrcd == qpo::plan::kNoObject);
  CHECK(r1.cap.max_send_wr == 16);
  CHECK(r1.peer == p.qp_id("c1"));
  CHECK(p.peer_name(r1) == "c1");
  CHECK_FALSE(r1.sq_psn.has_value());  // sq_psn: random
  const auto& da = p.devices.at(r1.device);
  CHECK(da.name == "da");
  CHECK(da.host == "a");
  CHECK(da.gid_auto);
}

TEST_CASE("QP facts: a peer outside the scenario counts after the QPs; a literal sq_psn is kept") {
  auto p = plan_of_file("scenarios/interop/dut-given-values.yaml");
  const auto& qa = p.qps.at(p.qp_id("qa"));
  REQUIRE(p.externals.size() == 1);
  CHECK(qa.peer == p.qp_count());
  CHECK(p.peer_name(qa) == "dut");
  CHECK(qa.sq_psn == std::optional<uint32_t>(0));
}

TEST_CASE("QP facts: a UD QP's literal qkey; a QP that connects to nobody has no peer") {
  auto p = plan_of_file("scenarios/two-host-rc-ud.yaml");
  const auto& ur = p.qps.at(p.qp_id("ur"));
  CHECK(ur.qkey == 0x33333333u);
  CHECK(ur.type == qpo::spec::QpType::UD);
  CHECK(ur.peer == qpo::plan::kNoObject);
  CHECK(p.peer_name(ur).empty());
  CHECK(p.devices.at(ur.device).host == "b");
}
