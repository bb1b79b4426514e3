// An external peer in the plan: where its exchange steps sit among the QP's bring-up, what a
// workload on it carries, and that no smoke aims at it (scenarios/interop/).
#include <doctest/doctest.h>

#include <tuple>

#include <string>
#include <vector>

#include "golden/plan_of_file.h"
#include "plan/declared_waits.h"

using qpo::plan::StepKind;
using qpo::test::plan_of_file;

namespace {

// The host's steps as "kind object" from the first exchange-phase step to the first stage.
std::vector<std::string> bringup_tail(const qpo::plan::HostPlan& h) {
  std::vector<std::string> out;
  bool on = false;
  for (const auto& s : h.steps) {
    if (s.kind == StepKind::Publish) on = true;
    if (!on) continue;
    if (s.stage >= 0 || s.kind == StepKind::Destroy) break;
    out.push_back(std::string(qpo::plan::step_kind_name(s.kind)) + " " + s.object);
  }
  return out;
}

}  // namespace

TEST_CASE("qpo as the tool's client: the whole exchange before RTR, nothing after RTS") {
  auto p = plan_of_file("scenarios/interop/ibv-rc-pingpong-client.yaml");
  REQUIRE(p.externals.size() == 1);
  CHECK(p.externals[0].name == "tool");
  CHECK(p.externals[0].qp == "qa");
  CHECK(p.externals[0].host == "a");
  CHECK(p.externals[0].server == "10.0.1.2");
  CHECK(p.externals[0].port == 18515);
  CHECK(p.externals[0].qpo_initiates());
  CHECK(bringup_tail(p.hosts[0]) == std::vector<std::string>{"publish a", "resolve a", "external_exchange qa",
                                                             "modify qa", "modify qa"});
}

TEST_CASE("qpo as the tool's server: its answer comes after RTS, as ibv_rc_pingpong's server sends it") {
  auto p = plan_of_file("scenarios/interop/ibv-rc-pingpong-server.yaml");
  REQUIRE(p.externals.size() == 1);
  CHECK(p.externals[0].qpo_listens());
  CHECK_FALSE(p.externals[0].qpo_initiates());
  CHECK(bringup_tail(p.hosts[0]) == std::vector<std::string>{"publish a", "resolve a", "external_exchange qb",
                                                             "modify qb", "modify qb", "external_reply qb"});
  for (const auto& s : p.hosts[0].steps)
    if (s.kind == StepKind::ExternalExchange || s.kind == StepKind::ExternalReply) CHECK(s.extra().external == 0);
}

TEST_CASE("a workload on an external peer's QP: the tool's ping-pong, no receiver in the scenario, no smoke") {
  auto p = plan_of_file("scenarios/interop/ibv-rc-pingpong-client.yaml");
  REQUIRE(p.workloads.size() == 1);
  CHECK(p.workloads[0].external == "tool");
  CHECK(p.workloads[0].receivers.empty());
  int workloads = 0;
  for (const auto& s : p.hosts[0].steps) {
    CHECK(s.kind != StepKind::SmokeSend);
    CHECK(s.kind != StepKind::SmokeReceive);
    if (s.kind != StepKind::Workload) continue;
    ++workloads;
    bool rhythm = false;
    for (const auto& a : s.args) rhythm |= a.name == "rhythm" && a.value.find("qpo sends first") != std::string::npos;
    CHECK(rhythm);
  }
  CHECK(workloads == 1);
  // The QP receives the tool's answers: its slots hold a 4096-byte message (plus 64).
  int slots = 0;
  for (const auto& s : p.hosts[0].steps)
    if (s.kind == StepKind::RegSlots && s.object == "qpo.slots.qa") {
      ++slots;
      CHECK(s.count == 4096 + 64);
    }
  CHECK(slots == 1);
}

TEST_CASE("declared waits: each external step may wait the whole phase timeout, so the round waits longer") {
  // qpo serving two tools: two accepts before RTR and two answers after RTS, in bring-up.
  auto p = plan_of_file("tests/scenarios/interop/pingpong-servers.yaml");
  CHECK(qpo::plan::longest_stage_wait_ms(p, {.phase_timeout_ms = 30000, .event_timeout_ms = 5000}) == 4 * 30000);
}

TEST_CASE("perftest: the opening and first keys before RTR, two more keys after RTS, in both roles") {
  for (const char* file : {"scenarios/interop/ib-write-bw-client.yaml", "scenarios/interop/ib-write-bw-server.yaml"}) {
    CAPTURE(file);
    auto p = plan_of_file(file);
    REQUIRE(p.externals.size() == 1);
    CHECK(p.externals[0].perftest());
    CHECK(std::string(p.externals[0].tool()) == "ib_write_bw");
    CHECK(p.externals[0].size == 65536);
    CHECK(p.externals[0].iterations == 200);
    CHECK(bringup_tail(p.hosts[0]) == std::vector<std::string>{"publish a", "resolve a", "external_exchange qa",
                                                               "modify qa", "modify qa", "external_reply qa"});
  }
}

TEST_CASE("perftest: the workload's op names the tool, and its step says every part of the conversation") {
  auto p = plan_of_file("tests/scenarios/interop/perftest-servers.yaml");
  REQUIRE(p.externals.size() == 7);
  CHECK(std::string(p.externals[0].tool()) == "ib_write_bw");
  CHECK(std::string(p.externals[1].tool()) == "ib_read_bw");
  CHECK(std::string(p.externals[2].tool()) == "ib_send_bw");
  CHECK(std::string(p.externals[3].tool()) == "ib_send_lat");  // tool: says so; its op alone would say ib_send_bw
  CHECK(std::string(p.externals[4].tool()) == "ib_write_lat");
  CHECK(p.externals[1].out_reads == 16);  // the QP's max_dest_rd_atomic: the tool's max_rd_atomic
  std::vector<std::string> seen;
  for (const auto& s : p.hosts[0].steps) {
    if (s.kind != StepKind::Workload) continue;
    std::string args;
    for (const auto& a : s.args) args += a.name + "=" + a.value + "\n";
    seen.push_back(args);
  }
  REQUIRE(seen.size() == 7);
  CHECK(seen[0].find("peer=external 'write_tool' (ib_write_bw client)\n") != std::string::npos);
  CHECK(seen[0].find("traffic=the tool's 200 RDMA WRITEs of 1024 B at qpo.slots.wq, unchecked\n") != std::string::npos);
  CHECK(seen[0].find("report=keys once the tool has run, then its figures, which qpo reports (qpo's five units back are zeros: the tool's client ignores them)\n") != std::string::npos);
  CHECK(seen[2].find("sync=qpo's receives (qpo.slots.sq), then keys once more\n") != std::string::npos);
  CHECK(seen[2].find("report=") == std::string::npos);  // ib_send_bw exchanges no report
  CHECK(seen[2].find("close=keys, then \"done\"\n") != std::string::npos);
  CHECK(seen[3].find("rhythm=ping-pong: qpo answers each SEND with one (the tool's server)\n") != std::string::npos);
  // No verify step: what the tool wrote or read is not qpo's to check.
  for (const auto& s : p.hosts[0].steps) CHECK(s.kind != StepKind::Verify);
}

TEST_CASE("perftest: qpo's slots are the buffer it advertises, at least the tool's 4 KiB cycle buffer") {
  auto p = plan_of_file("tests/scenarios/interop/perftest-clients.yaml");
  int slots = 0;
  for (const auto& s : p.hosts[0].steps)
    if (s.kind == StepKind::RegSlots) {
      ++slots;
      CHECK(s.count == 4096 + 64);  // 1 KiB and 2 B messages: the cycle buffer
    }
  CHECK(slots == 7);
  auto big = plan_of_file("scenarios/interop/ib-write-bw-client.yaml");  // -s 65536: the message
  int big_slots = 0;
  for (const auto& s : big.hosts[0].steps)
    if (s.kind == StepKind::RegSlots) {
      ++big_slots;
      CHECK(s.count == 65536 + 64);
    }
  CHECK(big_slots == 1);
}

TEST_CASE("declared waits: serving a perftest client, the workload waits up to a phase timeout for the tool's run") {
  const qpo::plan::WaitDefaults d{.phase_timeout_ms = 30000, .event_timeout_ms = 5000};
  for (const char* file : {"tests/scenarios/interop/perftest-servers.yaml", "tests/scenarios/interop/perftest-clients.yaml"}) {
    CAPTURE(file);
    auto p = plan_of_file(file);
    bool serving = std::string(file).find("servers") != std::string::npos;
    int workloads = 0;
    for (const auto& s : p.hosts[0].steps)
      if (s.kind == StepKind::Workload) {
        ++workloads;
        // qpo's own test (its client) is bounded by its completions' timeout, as any op workload;
        // with -R any side first waits for the tool's keys after the CM connection.
        bool over_cm = s.object == "write_bw_R" || s.object == "send_bw_R";
        CAPTURE(s.object);
        CHECK(qpo::plan::declared_wait_ms(p, s, d) == (serving || over_cm ? 30000u : 0u));
      }
    CHECK(workloads == 7);
  }
}

namespace {

// The value of argument `name` of `s`, or "".
std::string arg_of(const qpo::plan::Step& s, const std::string& name) {
  for (const auto& a : s.args)
    if (a.name == name) return a.value;
  return "";
}

const qpo::plan::Step* step_of(const qpo::plan::HostPlan& h, StepKind kind, const std::string& object) {
  for (const auto& s : h.steps)
    if (s.kind == kind && s.object == object) return &s;
  return nullptr;
}

}  // namespace

TEST_CASE("rdma_cm: the CM's steps are the exchange (no external exchange step), and the end knows its tool") {
  auto p = plan_of_file("tests/scenarios/interop/rdmacm-tools.yaml");
  REQUIRE(p.externals.size() == 8);
  for (const auto& s : p.hosts[0].steps) {
    CHECK(s.kind != StepKind::ExternalExchange);
    CHECK(s.kind != StepKind::ExternalReply);
    CHECK(s.kind != StepKind::SmokeSend);
  }
  REQUIRE(p.cm_ends.size() == 8);
  for (const auto& e : p.cm_ends) {
    CAPTURE(e.qp);
    CHECK(e.external);
    // qpo sends the DREQ whatever its role (ucmatose's client waits for it), but as rping's
    // server it waits for the client's, as rping's own server does.
    CHECK(e.disconnects_first() == (e.qp != "po"));
    CHECK(e.link_host == "a");
  }
  CHECK(p.cm_ends[2].peer == "ucmatose_client");
  CHECK(p.cm_ends[2].peer_from == "10.0.1.2");
  CHECK(p.cm_ends[3].peer_from.empty());
}

TEST_CASE("rdma_cm: who sends first follows the tool, and ucmatose's turn is all its messages") {
  auto p = plan_of_file("tests/scenarios/interop/rdmacm-tools.yaml");
  auto& x = p.externals;
  REQUIRE(x.size() == 8);
  // us dials ucmatose's server, which sends first; uc is ucmatose's server and sends first.
  CHECK_FALSE(x[0].qpo_initiates());
  CHECK(x[0].messages_per_turn() == 10);
  CHECK(x[2].qpo_initiates());
  CHECK(x[2].messages_per_turn() == 10);
  // rdma_client sends first: qpo does as rdma_server's client, answers as rdma_client's server.
  CHECK(x[1].qpo_initiates());
  CHECK(x[1].messages_per_turn() == 1);
  CHECK_FALSE(x[3].qpo_initiates());
  CHECK(std::string(x[3].tool()) == "rdma_client");
  // udaddy's client sends first, all its messages, each with its QP number as immediate data.
  CHECK(x[4].ud);
  CHECK(x[4].imm_qpn);
  CHECK(x[4].qpo_initiates());
  CHECK(x[4].messages_per_turn() == 10);
  CHECK_FALSE(x[5].qpo_initiates());
  CHECK_FALSE(x[0].imm_qpn);
  const auto& h = p.hosts[0];
  auto* us = step_of(h, StepKind::Workload, "us_talk");
  auto* uc = step_of(h, StepKind::Workload, "uc_talk");
  REQUIRE(us);
  REQUIRE(uc);
  CHECK(arg_of(*us, "peer") == "external 'ucmatose_server' (ucmatose server)");
  CHECK(arg_of(*us, "rhythm") == "qpo waits for the tool's 10 SENDs, into the receives posted at bring-up, then sends 10 "
                                 "SENDs of 100 B from qpo.slots.us back");
  CHECK(arg_of(*uc, "rhythm") == "qpo sends 10 SENDs of 100 B from qpo.slots.uc, all at once, then waits for the tool's 10 "
                                 "SENDs, into the receives posted at bring-up");
}

TEST_CASE("rdma_cm: a listener for an external tool says whom it takes, and the connect says it retries") {
  auto p = plan_of_file("tests/scenarios/interop/rdmacm-tools.yaml");
  const auto& h = p.hosts[0];
  auto* wait_uc = step_of(h, StepKind::CmWaitRequest, "uc");
  auto* wait_rc = step_of(h, StepKind::CmWaitRequest, "rc");
  auto* connect_us = step_of(h, StepKind::CmConnect, "us");
  REQUIRE(wait_uc);
  REQUIRE(wait_rc);
  REQUIRE(connect_us);
  CHECK(arg_of(*wait_uc, "accepts") == "only from 10.0.1.2; any other request is rejected and named");
  CHECK(arg_of(*wait_rc, "accepts") == "the first request (external 'rdma_client': any address)");
  CHECK(arg_of(*connect_us, "retries") == "while nothing listens (REJECTED, reason 8), until the phase timeout");
  auto* bye = step_of(h, StepKind::CmDisconnect, "uc");
  REQUIRE(bye);
  CHECK(arg_of(*bye, "first") == "qpo's DREQ");
}

TEST_CASE("rdma_cm: udaddy's SENDs carry immediate data, and its server learns where to answer from the first") {
  auto p = plan_of_file("tests/scenarios/interop/rdmacm-tools.yaml");
  const auto& h = p.hosts[0];
  auto* du = step_of(h, StepKind::Workload, "du_talk");
  auto* dc = step_of(h, StepKind::Workload, "dc_talk");
  REQUIRE(du);
  REQUIRE(dc);
  CHECK(arg_of(*du, "op") == "IBV_WR_SEND_WITH_IMM");
  CHECK(arg_of(*du, "imm_data") == "QP du's qp_num");
  CHECK(arg_of(*du, "answers to").empty());
  CHECK(arg_of(*dc, "answers to") == "the QP number in the tool's first message's imm_data, at the address its request came from");
  CHECK(arg_of(*du, "then").empty());  // UD: nothing to disconnect
  for (const auto& s : h.steps) {
    CHECK_FALSE((s.kind == StepKind::CmDisconnect && (s.object == "du" || s.object == "dc")));
  }
  auto* connect = step_of(h, StepKind::CmConnect, "du");
  REQUIRE(connect);
  CHECK(arg_of(*connect, "retries") == "while nothing listens (UNREACHABLE, status 1), until the phase timeout");
}

TEST_CASE("op recv: a member expects a sender outside the scenario; it posts nothing and joins as a receiver only") {
  auto p = plan_of_file("tests/scenarios/interop/mckey.yaml");
  const auto& h = p.hosts[0];
  auto* recv = step_of(h, StepKind::Workload, "from_mckey");
  REQUIRE(recv);
  CHECK(arg_of(*recv, "op") == "receive only (posts nothing)");
  CHECK(arg_of(*recv, "expects") ==
        "10 datagrams of 100 B from a sender outside the scenario (any QP), into the receives posted at bring-up");
  CHECK(arg_of(*recv, "mcast") == "from_tool");
  int joins = 0, address_handles = 0;
  for (const auto& s : h.steps) {
    if (s.kind == StepKind::CreateMcastAh && s.object.find("->from_tool") != std::string::npos) ++address_handles;
    if (s.kind != StepKind::CmJoinMcast || s.object != "from_tool:ma") continue;
    ++joins;
    CHECK(arg_of(s, "join_flags").starts_with("RDMA_MC_JOIN_FLAG_FULLMEMBER"));  // not a sender's send-only join
  }
  CHECK(joins == 1);
  CHECK(address_handles == 0);  // nothing is sent to the group
  REQUIRE(p.workloads.size() == 2);
  CHECK(p.workloads[0].receivers == std::vector<std::string>{"ma"});
  // ma's slots hold the outside sender's 100 B (plus room for the GRH).
  for (const auto& s : h.steps)
    if (s.kind == StepKind::RegSlots && s.object == "qpo.slots.ma") CHECK(s.count >= 100 + 40);
}

TEST_CASE("rdma_cm: rping's pings move through the workload's local_mr; its client disconnects") {
  auto p = plan_of_file("tests/scenarios/interop/rdmacm-tools.yaml");
  auto& x = p.externals;
  REQUIRE(x.size() == 8);
  CHECK(x[6].buffers);
  CHECK(x[7].client_disconnects);
  const auto& h = p.hosts[0];
  auto* pi = step_of(h, StepKind::Workload, "pi_talk");
  auto* po = step_of(h, StepKind::Workload, "po_talk");
  REQUIRE(pi);
  REQUIRE(po);
  CHECK(arg_of(*pi, "check") == "the bytes written back are the ones read (rping -V does the same)");
  CHECK(arg_of(*pi, "per ping").starts_with("SEND {addr, rkey, size} of pingbuf's first 64 B"));
  CHECK(arg_of(*po, "per ping").starts_with("receive the tool's {addr, rkey, size}, RDMA READ it into servebuf"));
  CHECK(arg_of(*pi, "then") == "after 5 pings qpo disconnects (rdma_disconnect), as rping's client does");
  CHECK(arg_of(*po, "then") == "after 5 pings qpo waits for the tool's DREQ (rping's client disconnects)");
  auto* bye = step_of(h, StepKind::CmDisconnect, "po");
  REQUIRE(bye);
  CHECK(arg_of(*bye, "after") == "the peer's DREQ");
}

TEST_CASE("perftest: ib_write_lat syncs twice before RTR, its server writes first, and nothing follows the test") {
  auto clients = plan_of_file("tests/scenarios/interop/perftest-clients.yaml");
  auto servers = plan_of_file("tests/scenarios/interop/perftest-servers.yaml");
  const auto* c = clients.external("wlat_tool");
  const auto* s = servers.external("wlat_tool");
  REQUIRE(c);
  REQUIRE(s);
  CHECK(std::string(c->tool()) == "ib_write_lat");
  CHECK(c->keys_before_rtr() == 2);
  CHECK(clients.external("lat_tool")->keys_before_rtr() == 1);
  CHECK_FALSE(c->qpo_writes_first());  // the tool serves: it writes first
  CHECK(s->qpo_writes_first());        // qpo serves: qpo writes first
  auto* w = step_of(servers.hosts[0], StepKind::Workload, "write_lat");
  REQUIRE(w);
  CHECK(arg_of(*w, "rhythm") == "ping-pong: qpo writes first, then waits for the tool's write (the tool's client)");
  CHECK(arg_of(*w, "close") == "none: the tool prints its figures and closes the connection");
}

TEST_CASE("perftest -R: one sync in the exchange step, the test QP through the CM, the keys after it open the workload") {
  for (const char* file : {"tests/scenarios/interop/perftest-clients.yaml", "tests/scenarios/interop/perftest-servers.yaml"}) {
    CAPTURE(file);
    auto p = plan_of_file(file);
    bool serving = std::string(file).find("servers") != std::string::npos;
    const auto& h = p.hosts[0];
    REQUIRE(p.externals.size() == 7);
    const auto& x = p.externals[5];
    CHECK(x.name == "wR_tool");
    CHECK(x.test_over_cm);
    CHECK(x.keys_in_exchange() == 1);
    CHECK(x.keys_after_cm() == 4);  // a sync, then the three hand-shakes of a TCP bandwidth test
    // Per tool (perftest's mains after create_rdma_cm_connection): write_lat hand-shakes once
    // more; read_bw, send_bw and send_lat as write_bw.
    struct Tool {
      const char* name;
      qpo::util::Op op;
      bool latency;
      int after;
    };
    // (No structured bindings: clang 14 cannot capture one in CAPTURE's lambda.)
    for (const Tool& t : {Tool{"ib_read_bw", qpo::util::Op::Read, false, 4}, Tool{"ib_send_bw", qpo::util::Op::Send, false, 4},
                          Tool{"ib_send_lat", qpo::util::Op::Send, true, 4}, Tool{"ib_write_lat", qpo::util::Op::Write, true, 5}}) {
      qpo::plan::ExternalPeer peer = x;
      peer.op = t.op;
      peer.latency = t.latency;
      CAPTURE(t.name);
      CHECK(std::string(peer.tool()) == t.name);
      CHECK(peer.keys_in_exchange() == 1);
      CHECK(peer.keys_after_cm() == t.after);
    }
    CHECK(step_of(h, StepKind::ExternalReply, "wRq") == nullptr);  // no RTR/RTS of qpo's to hand-shake around
    const auto* exchange = step_of(h, StepKind::ExternalExchange, "wRq");
    REQUIRE(exchange);
    CHECK(arg_of(*exchange, "rdma_cm") == (serving ? "listen on port 18520 (RDMA_PS_TCP, from the run's start; a QP of its own)"
                                                   : "connect to 10.0.1.2:18520 (RDMA_PS_TCP; a QP of its own)"));
    CHECK(arg_of(*exchange, "tcp").empty());
    const auto* workload = step_of(h, StepKind::Workload, "write_bw_R");
    REQUIRE(workload);
    CHECK(arg_of(*workload, "keys") ==
          "first the exchange's hand-shakes after the test QPs' rdma_cm connection (over the tool's control connection): a "
          "sync, then the keys 3 times each way (QP wRq's QPN, PSN, GID, qpo.slots.wRq; the tool's buffer from them)");
    CHECK(arg_of(*workload, "close") == "keys (no \"done\" over RDMA)");
    // Serving, qpo answers the tool's sync from the step that waits for its test QP's request:
    // the tool connects as soon as it has the answer, so qpo listens by then.
    const qpo::plan::CmEnd* end = nullptr;
    for (const auto& e : p.cm_ends)
      if (e.qp == "wRq") end = &e;
    REQUIRE(end);
    CHECK(end->external);
    CHECK(end->perftest_sync == (serving ? 5 : -1));
    CHECK(end->port == 18520);
    if (serving) {
      const auto* wait = step_of(h, StepKind::CmWaitRequest, "wRq");
      REQUIRE(wait);
      CHECK(arg_of(*wait, "first") == "qpo's keys: the answer to the sync the external exchange read");
      CHECK(arg_of(*wait, "accepts") == "only from 10.0.1.2; any other request is rejected and named");
    }
  }
}

TEST_CASE("exchange values: one step writes qpo's values and takes the peer's, as given or from a file; no tool's steps") {
  auto given = plan_of_file("scenarios/interop/dut-given-values.yaml");
  REQUIRE(given.externals.size() == 1);
  const auto& x = given.externals[0];
  CHECK(x.given());
  REQUIRE(x.values);
  CHECK(x.values->qpn == 0x11);
  CHECK(x.values->mr_length == 1048576);
  CHECK(x.own_values == "-");
  const auto& h = given.hosts[0];
  const auto* step = step_of(h, StepKind::ExternalExchange, "qa");
  REQUIRE(step);
  CHECK(step->verb.str() == "external values");
  CHECK(arg_of(*step, "writes") == "QP qa's qpn, psn, lid, gid, qkey, mtu and its buffer qpo.slots.qa (addr, rkey, length) as JSON to stdout (stderr when stdout carries JSON), first");
  CHECK(arg_of(*step, "peer values") ==
        "qpn 0x11, psn 0x0, lid 0, gid 10.0.1.2, qkey 0x11111111, mtu 1024, buffer 0x7f0000000000 rkey 0x1234 length 1048576");
  CHECK(step_of(h, StepKind::ExternalReply, "qa") == nullptr);
  const auto* writes = step_of(h, StepKind::Workload, "writes");
  REQUIRE(writes);
  CHECK(arg_of(*writes, "traffic") == "100 IBV_WR_RDMA_WRITE of 4096 B at the buffer the peer's values give, from qpo.slots.qa; "
                                      "the peer's side is not the scenario's (nothing checked there)");
  auto receiver = plan_of_file("tests/scenarios/interop/values-receiver.yaml");
  const auto* read = step_of(receiver.hosts[0], StepKind::ExternalExchange, "qb");
  REQUIRE(read);
  CHECK(arg_of(*read, "peer values") == "read from /tmp/qv/sender.json (JSON: qpn, psn, lid, gid, qkey, mtu, mr {addr, rkey, length})");
  const auto* count = step_of(receiver.hosts[0], StepKind::Workload, "count");
  REQUIRE(count);
  CHECK(arg_of(*count, "expects") == "100 messages of 4096 B from a sender outside the scenario, into the receives posted at bring-up");
}
