// External peers (`externals:`): what qpo can check about a connection whose other side is a
// stock tool, and the note that says what it cannot.
#include <arpa/inet.h>
#include <infiniband/verbs.h>

#include <map>
#include <vector>

#include "check/validate.h"
#include "interop/rping_message.h"
#include "util/strings.h"

namespace qpo::check {

namespace {

using scenario::External;
using scenario::Qp;
using util::SourceLoc;

std::string exchange_name(External::Exchange x) { return std::string(External::exchange_name(x)); }
bool perftest(const External& e) { return e.exchange == External::Exchange::Perftest; }
bool rdma_cm(const External& e) { return e.exchange == External::Exchange::RdmaCm; }
bool given(const External& e) { return e.exchange == External::Exchange::Values; }

// ibv_ud_pingpong's qkey, fixed in the tool (ud_pingpong.c): its sends carry it, and it drops
// datagrams with any other.
constexpr uint64_t kPingpongQkey = 0x11111111;
// udaddy.c's port ("7174"): its -p is the port space, and no option changes the port.
constexpr uint32_t kUdaddyPort = 7174;

// The tool's messages need the QP's own receives, posted before it meets the tool: no SRQ.
void refuse_srq(const Qp& q, const External& e, const std::string& rule, diag::DiagSink& sink) {
  auto& d = sink.error("Q561", q.srq.loc, "qps." + q.name + ".srq",
                       "QP '" + q.name + "' receives through SRQ '" + q.srq.name + "' and connects to external peer '" +
                           e.name + "'");
  d.rule = rule;
  d.hint = "remove srq: and give cap.max_recv_wr";
}

// exchange rdma_cm: the QP's cm: connects to the tool (active) or accepts it (passive); the
// tool's role must be the other one, and its conversation needs qpo's receives.
void check_cm_qp(const Qp& q, const External& e, diag::DiagSink& sink) {
  std::string path = "qps." + q.name + ".cm";
  if (!q.cm.given) {
    auto& d = sink.error("Q561", q.connect.loc.given() ? q.connect.loc : q.loc, "qps." + q.name + ".connect",
                         "QP '" + q.name + "' connects to external peer '" + e.name + "' (exchange rdma_cm) without 'cm:'");
    d.rule = "with exchange rdma_cm the connection manager brings the QP up and carries the exchange";
    d.hint = "write cm: {role: active, address: TOOL_ADDRESS, port: 7471, peer: " + e.name + "} (or role: passive)";
    return;
  }
  const auto* tool = External::cm_tool(e.tool);
  auto want = tool && tool->ud ? spec::QpType::UD : spec::QpType::RC;
  if (q.type >= 0 && tool && q.qp_type != want) {
    auto& d = sink.error("Q561", q.type_loc.given() ? q.type_loc : q.loc, "qps." + q.name + ".type",
                         q.type_name + " QP '" + q.name + "' cannot talk to " + std::string(tool->name) +
                             " (external peer '" + e.name + "'): it uses " + (tool->ud ? "UD" : "RC") + " QPs");
    d.rule = "ucmatose, rdma_server, rdma_client and rping connect RC QPs over RDMA_PS_TCP; udaddy resolves UD QPs "
             "over RDMA_PS_UDP";
    d.hint = std::string("write type: ") + (tool->ud ? "UD" : "RC");
  }
  if (q.cm.exchange_only) {
    auto& d = sink.error("Q561", q.cm.exchange_only_loc, path + ".exchange_only",
                         "QP '" + q.name + "' has exchange_only and connects to external peer '" + e.name + "'");
    d.rule = "exchange_only carries qpo's own exchange in the private data: only another qpo QP reads it";
    d.hint = "remove exchange_only";
  }
  if (tool && tool->qpo_active && *tool->qpo_active != q.cm.active) {
    auto& d = sink.error("Q561", q.cm.role_loc.given() ? q.cm.role_loc : q.cm.loc, path + ".role",
                         std::string(tool->name) + (*tool->qpo_active ? " serves" : " connects") + ": QP '" + q.name +
                             "' must be the " + (*tool->qpo_active ? "active" : "passive") + " side (external peer '" +
                             e.name + "')");
    d.hint = *tool->qpo_active ? "write role: active with the tool's address (or tool: rdma_client when qpo serves)"
                               : "write role: passive (or tool: rdma_server when the tool serves)";
  }
  if (tool && tool->name == "udaddy" && q.cm.port != kUdaddyPort) {
    auto& d = sink.error("Q561", q.cm.port_loc.given() ? q.cm.port_loc : q.cm.loc, path + ".port",
                         "QP '" + q.name + "' meets udaddy (external peer '" + e.name + "') on port " +
                             std::to_string(q.cm.port) + "; udaddy's port is 7174 and has no option");
    d.hint = "write port: 7174";
  }
  unsigned char v4[4], v6[16];
  if (!e.from.empty() && inet_pton(AF_INET, e.from.c_str(), v4) != 1 && inet_pton(AF_INET6, e.from.c_str(), v6) != 1) {
    auto& d = sink.error("Q170", e.from_loc, "externals." + e.name + ".from",
                         "'" + util::printable(e.from, 64) + "' is not an IP address: with exchange rdma_cm, 'from' is "
                         "compared with the address a connect request comes from");
    d.hint = "write the tool's IP address (10.0.1.2, fd00:1::2)";
  }
  // The answers go out through the device's IPv4-mapped GID (its gid_index): an IPv6 peer would
  // need a GID of that family too.
  bool v6_peer = (q.cm.active && inet_pton(AF_INET6, q.cm.address.c_str(), v6) == 1) ||
                 (!e.from.empty() && inet_pton(AF_INET6, e.from.c_str(), v6) == 1);
  if (tool && tool->ud && v6_peer) {
    auto& d = sink.error("Q561", q.cm.active ? q.cm.address_loc : e.from_loc, q.cm.active ? path + ".address" : "externals." + e.name + ".from",
                         "udaddy over IPv6 (QP '" + q.name + "', external peer '" + e.name + "'): qpo talks to UD tools over IPv4 only, for now");
    d.rule = "qpo's UD sends to the tool leave through the device's IPv4-mapped GID; an IPv6 destination needs an IPv6 source GID";
    d.hint = "use the tool's IPv4 address";
  }
  if (!e.from.empty() && q.cm.active) {
    auto& d = sink.error("Q170", e.from_loc, "externals." + e.name + ".from",
                         "'from' limits who may connect to qpo; QP '" + q.name + "' is the active side of external peer '" +
                             e.name + "'");
    d.hint = "remove from, or make the QP's cm: role passive";
  }
  if (q.srq) refuse_srq(q, e, "the tool's messages land in the QP's own receive queue, posted before the connection", sink);
}

// perftest -R: the tool's test QP connects through rdma_cm on the exchange's port (-p), the
// tool's server listening there; qpo's QP takes the other role, by its cm:.
void check_perftest_cm_qp(const Qp& q, const External& e, diag::DiagSink& sink) {
  std::string path = "qps." + q.name + ".cm";
  bool qpo_serves = e.server.empty();
  std::string want = qpo_serves ? "{role: passive, peer: " + e.name + ", port: " + std::to_string(e.port) + "}"
                                : "{role: active, peer: " + e.name + ", address: " + e.server + ", port: " + std::to_string(e.port) + "}";
  auto refuse = [&](const SourceLoc& at, const std::string& key, const std::string& what) {
    auto& d = sink.error("Q561", at.given() ? at : (q.cm.given ? q.cm.loc : q.loc),
                         key.empty() ? "qps." + q.name + ".connect" : path + "." + key, what);
    d.rule = "with rdma_cm: true (perftest's -R) the tool's server listens through rdma_cm on its -p, where its exchange's "
             "control connection came too, and its client connects there: the QP's cm: takes the other side";
    d.hint = "write cm: " + want;
  };
  if (!q.cm.given) {
    refuse(q.connect.loc, "", "QP '" + q.name + "' meets external peer '" + e.name + "' (perftest with rdma_cm: true) without 'cm:'");
    return;
  }
  if (q.cm.exchange_only)
    refuse(q.cm.exchange_only_loc, "exchange_only", "QP '" + q.name + "' has exchange_only: the tool's keys come over its own control connection");
  // The tool's client connects its test QP once and does not survive a refusal; the workload
  // needs the connection.
  if (q.cm.reject) refuse(q.cm.reject_loc, "reject", "QP '" + q.name + "' rejects the tool's test QP (reject:): the tool's test needs the connection");
  if (!q.cm.expect_event.empty())
    refuse(q.cm.expect_loc, "expect", "QP '" + q.name + "' expects a failed connection (expect:): the tool's test needs the connection");
  if (q.type >= 0 && q.qp_type != spec::QpType::RC)
    refuse(q.type_loc, "", q.type_name + " QP '" + q.name + "' meets perftest -R: qpo plays its RC tests only");
  if (q.cm.active == qpo_serves)
    refuse(q.cm.role_loc, "role", "QP '" + q.name + "' is the " + (q.cm.active ? "active" : "passive") + " side, but " +
                                      (qpo_serves ? "qpo serves the tool (listen: true)" : "the tool serves (server: " + e.server + ")"));
  if (q.cm.port != e.port)
    refuse(q.cm.port_loc, "port", "QP '" + q.name + "' connects on port " + std::to_string(q.cm.port) + ", the tool on " +
                                      std::to_string(e.port) + " (its -p, the exchange's port)");
  if (q.cm.active && !qpo_serves && !q.cm.address.empty() && q.cm.address != e.server)
    refuse(q.cm.address_loc, "address", "QP '" + q.name + "' connects to " + q.cm.address + ", the tool serves on " + e.server);
  // perftest's rdma_cm side is IPv4 only (its addresses are AF_INET): so is qpo's listener.
  unsigned char v4[4];
  auto ipv4_only = [&](const std::string& value, const SourceLoc& at, const std::string& key) {
    if (value.empty() || inet_pton(AF_INET, value.c_str(), v4) == 1) return;
    auto& d = sink.error("Q170", at, "externals." + e.name + "." + key,
                         "'" + util::printable(value, 64) + "' is not an IPv4 address: perftest -R resolves and binds IPv4 "
                         "addresses only (AF_INET)");
    d.rule = "with rdma_cm: true the tool's control and test connections go through rdma_cm over IPv4; qpo compares "
             "`from` with the address the tool's requests come from";
    d.hint = "write the tool's IPv4 address (10.0.1.2)";
  };
  ipv4_only(e.server, e.server_loc, "server");
  ipv4_only(e.from, e.from_loc, "from");
  if (e.mtu_loc.given()) {
    auto& d = sink.warning("Q562", e.mtu_loc, "externals." + e.name + ".mtu",
                           "'mtu' of external peer '" + e.name + "' is offered to the tool, but with rdma_cm: true the CM "
                           "sets the test QPs' path MTU from the route");
    d.hint = "remove mtu";
  }
}

// exchange values: any connected or UD QP the scenario brings up with `peer` values; nothing is
// sent to the peer that the scenario does not declare.
void check_given_qp(const Qp& q, const External& e, diag::DiagSink& sink) {
  std::string path = "qps." + q.name;
  if (q.type >= 0 && q.qp_type != spec::QpType::RC && q.qp_type != spec::QpType::UC && q.qp_type != spec::QpType::UD) {
    auto& d = sink.error("Q561", q.type_loc.given() ? q.type_loc : q.loc, path + ".type",
                         q.type_name + " QP '" + q.name + "' cannot take external peer '" + e.name + "'s given values");
    d.rule = "exchange values gives one peer QP's values: an RC, UC or UD QP's dest_qp_num, rq_psn and address";
    d.hint = "write type: RC, UC or UD";
  }
  if (q.cm.given) {
    auto& d = sink.error("Q561", q.cm.loc, path + ".cm", "QP '" + q.name + "' has 'cm:' and takes external peer '" + e.name + "'s given values");
    d.rule = "with exchange values nothing connects: the QP comes up by its states: with the given values as `peer`";
    d.hint = "remove 'cm:'";
  }
}

void check_qp(const Qp& q, const External& e, diag::DiagSink& sink) {
  if (rdma_cm(e)) return check_cm_qp(q, e, sink);
  if (given(e)) return check_given_qp(q, e, sink);
  std::string path = "qps." + q.name + ".connect";
  bool ud = q.qp_type == spec::QpType::UD;
  if (perftest(e) && q.type >= 0 && q.qp_type != spec::QpType::RC) {
    auto& d = sink.error("Q561", q.connect.loc, path,
                         q.type_name + " QP '" + q.name + "' cannot connect to external peer '" + e.name +
                             "': exchange perftest connects RC QPs");
    d.rule = "qpo speaks perftest's bandwidth tests on RC (their default, -c RC); UC and UD are not done yet";
  } else if (q.type >= 0 && q.qp_type != spec::QpType::RC && !ud) {
    auto& d = sink.error("Q561", q.connect.loc, path,
                         q.type_name + " QP '" + q.name + "' cannot connect to external peer '" + e.name +
                             "': exchange " + exchange_name(e.exchange) + " connects RC or UD QPs");
    d.rule = "ibv_pingpong is the exchange of ibv_rc_pingpong (RC) and ibv_ud_pingpong (UD)";
  }
  if (ud)
    for (const auto& t : q.transitions)
      if (const auto* a = t.attr("qkey"); a && a->valid && a->symbol == scenario::Symbol::None && a->number != kPingpongQkey) {
        auto& d = sink.error("Q561", a->loc, a->path,
                             "qkey " + util::hex(a->number) + " of UD QP '" + q.name + "': ibv_ud_pingpong sends and "
                             "accepts only qkey 0x11111111");
        d.hint = "remove qkey (its default is 0x11111111) or write qkey: 0x11111111";
      }
  if (q.srq) {
    refuse_srq(q, e, "the tool's answers land in the QP's own receive queue, posted before the exchange as the tool does", sink);
  } else if (!perftest(e) && q.type >= 0 && q.cap.max_recv_wr == 0) {
    auto& d = sink.error("Q561", q.loc, "qps." + q.name + ".cap.max_recv_wr",
                         "QP '" + q.name + "' has max_recv_wr 0 and connects to external peer '" + e.name + "'");
    d.rule = "the tool sends as many messages as qpo does: its answers need posted receives";
    d.hint = "give cap.max_recv_wr (e.g. 64)";
  }
  if (perftest(e) && e.rdma_cm) {
    check_perftest_cm_qp(q, e, sink);
  } else if (q.cm.given) {
    auto& d = sink.error("Q561", q.cm.loc, "qps." + q.name + ".cm",
                         "QP '" + q.name + "' has 'cm:' and connects to external peer '" + e.name + "'");
    d.rule = "an external peer's values come from its own exchange (" + std::string(exchange_name(e.exchange)) +
             "), not from rdma_cm";
    d.hint = perftest(e) ? "remove 'cm:' (its states: bring it up with the peer's values), or give the external "
                           "rdma_cm: true when the tool runs with -R"
                         : "remove 'cm:' (its states: bring it up with the peer's values)";
  }
}

void serving_perftest(const scenario::Workload& w, const Qp& q, const External& e, diag::DiagSink& sink);

// The perftest tool on the other side: the external's `tool:`, else the bandwidth test of the
// QP's workload's op.
std::string perftest_tool_name(const External& e, const Qp& q, const scenario::Scenario& s) {
  if (!e.tool.empty()) return e.tool;
  for (const auto& w : s.workloads)
    if (w.qp.name == q.name && w.op)
      for (const auto& t : External::kPerftestTools)
        if (!t.latency && t.op == *w.op) return std::string(t.name);
  return "ib_write_bw";
}

// rping: the pings move through the workload's local_mr. As client, its first `size` bytes are
// what the tool RDMA READs and the next `size` where it RDMA WRITEs them back; as server, the
// READ's destination and the WRITE's source. rping's -S is 26 .. 65536.
void rping_buffer(const scenario::Workload& w, const Qp& q, const External& e, const scenario::Scenario& s, diag::DiagSink& sink) {
  std::string path = "workloads." + w.name;
  if (w.size < interop::kRpingMinSize || w.size > interop::kRpingMaxSize) {
    auto& d = sink.error("Q563", w.size_loc.given() ? w.size_loc : w.loc, path + ".size",
                         "size " + std::to_string(w.size) + " of workload '" + w.name + "': rping's -S is " +
                             std::to_string(interop::kRpingMinSize) + " .. " + std::to_string(interop::kRpingMaxSize));
    d.hint = "write size: 64 (rping's default)";  // kRpingMaxSize: rping refuses -S 65536
  }
  if (!w.local_mr) {
    auto& d = sink.error("Q563", w.loc, path + ".local_mr",
                         "workload '" + w.name + "' talks to rping (external peer '" + e.name + "') without local_mr");
    d.rule = "rping's pings move through a buffer of each side: the tool RDMA READs and WRITEs qpo's (as client), or "
             "qpo READs and WRITEs the tool's into its own (as server)";
    d.hint = "add local_mr: an MR on QP " + q.name + "'s PD of 2 x size bytes with access [local_write, remote_read, remote_write]";
    return;
  }
  const auto* m = s.mr(w.local_mr.name);
  if (!m) return;  // the reference check names it
  bool client = q.cm.active;
  uint64_t need = client ? 2 * w.size : w.size;
  uint32_t want = client ? (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE) : IBV_ACCESS_LOCAL_WRITE;
  if (m->size < need || (m->access & want) != want || m->pd.name != q.pd.name) {
    auto& d = sink.error("Q563", w.local_mr.loc, path + ".local_mr",
                         "MR '" + m->name + "' cannot carry rping's pings for QP '" + q.name + "': " +
                             (m->pd.name != q.pd.name ? "it is on PD '" + m->pd.name + "', the QP on '" + q.pd.name + "'"
                              : m->size < need        ? std::to_string(m->size) + " bytes, " + std::to_string(need) + " needed"
                                                      : std::string("its access lacks ") +
                                                            (client ? "local_write, remote_read or remote_write" : "local_write")));
    d.rule = client ? "as rping's client qpo advertises the MR's first size bytes (the tool READs them) and the next size "
                      "bytes (the tool WRITEs them back)"
                    : "as rping's server qpo READs the tool's buffer into the MR and WRITEs it back from there";
    d.hint = "give MR '" + m->name + "' size: " + std::to_string(need) + " and access: " +
             (client ? "[local_write, remote_read, remote_write]" : "[local_write]") + " on PD " + q.pd.name;
  }
}

// exchange rdma_cm: the tool's conversation is SENDs of one size (rdma_server's and
// rdma_client's: one of 16 bytes each way; ucmatose's: its -C messages of -S bytes each way, all
// at once), so qpo's receives must hold a whole burst before it comes.
void check_cm_workload(const scenario::Workload& w, const Qp& q, const External& e, const scenario::Scenario& s,
                       diag::DiagSink& sink) {
  const auto* tool = External::cm_tool(e.tool);
  std::string path = "workloads." + w.name;
  std::string name = tool ? std::string(tool->name) : "the tool";
  auto refuse = [&](const SourceLoc& at, const std::string& key, const std::string& what) {
    auto& d = sink.error("Q563", at.given() ? at : w.loc, key.empty() ? path : path + "." + key,
                         "workload '" + w.name + "' on QP '" + q.name + "' talks to external peer '" + e.name + "' (" +
                             name + "): " + what);
    d.rule = "exchange rdma_cm is followed by the tool's own conversation: SENDs of one size from and into qpo's own "
             "slots (ucmatose: the server's -C messages of -S bytes, then as many back; rdma_server/rdma_client: one "
             "16-byte message each way, the client's first; udaddy: the client's -C messages, then as many back), or "
             "rping's pings through the workload's local_mr";
    return &d;
  };
  if (!w.script.empty()) {
    refuse(w.script_loc, "script", "scripts cannot run against an external peer yet")->hint = "write 'op: send' with size and iterations";
    return;
  }
  if (w.op && *w.op != util::Op::Send)
    refuse(w.op_loc, "op", std::string(w.op_spelling()) + " is not part of the tool's conversation")->hint = "write 'op: send'";
  if (tool && tool->size && w.size != tool->size)
    refuse(w.size_loc, "size", "size " + std::to_string(w.size) + ": " + name + " sends and receives " +
                                   std::to_string(tool->size) + " bytes")
        ->hint = "write size: " + std::to_string(tool->size);
  if (tool && tool->count && w.iterations != tool->count)
    refuse(w.iterations_loc, "iterations", "iterations " + std::to_string(w.iterations) + ": " + name + " sends " +
                                               std::to_string(tool->count) + " message")
        ->hint = "write iterations: " + std::to_string(tool->count);
  if (w.remote_mr) refuse(w.remote_mr.loc, "remote_mr", "the tool publishes no buffer (no remote_mr)");
  if (w.mcast) refuse(w.mcast.loc, "mcast", "a multicast send has no external receiver");
  if (w.expect_status) refuse(w.expect_loc, "expect", "an expected error status is not supported with an external peer");
  if (tool && tool->buffers) {
    rping_buffer(w, q, e, s, sink);
  } else if (w.local_mr) {
    refuse(w.local_mr.loc, "local_mr", "it sends from and receives into qpo's own slots (no local_mr)");
  }
  if (w.offset_loc.given())
    refuse(w.offset_loc, "offset", tool && tool->buffers ? "the pings use local_mr from its start (no offset)"
                                                         : "it sends from and receives into qpo's own slots (no offset)");
  if (w.workers_loc.given()) refuse(w.workers_loc, "workers", "one QP, one conversation (no workers)");
  if (w.pin_loc.given()) refuse(w.pin_loc, "pin", "it runs on the executor's own thread (no pin)");
  // A burst arrives before qpo answers: every message of it needs a receive posted beforehand.
  uint64_t at_once = tool && tool->burst ? w.iterations : 1;
  if (q.type >= 0 && !q.srq && q.cap.max_recv_wr < at_once) {
    auto& d = sink.error("Q561", q.loc, "qps." + q.name + ".cap.max_recv_wr",
                         "QP '" + q.name + "' has max_recv_wr " + std::to_string(q.cap.max_recv_wr) + ", and " + name +
                             " sends its " + std::to_string(at_once) + " messages at once (workload '" + w.name + "')");
    d.rule = "qpo posts its receives before the connection, as the tool does; a message without one is an RNR";
    d.hint = "give cap.max_recv_wr: " + std::to_string(at_once) + " or more";
  }
}

// exchange values: qpo's own op loop aims at the peer (SENDs into its receives, RDMA WRITEs and
// READs at the buffer its values give), or counts what it sends (op recv); nothing else.
void check_given_workload(const scenario::Workload& w, const Qp& q, const External& e, diag::DiagSink& sink) {
  std::string path = "workloads." + w.name;
  auto refuse = [&](const SourceLoc& at, const std::string& key, const std::string& what) {
    auto& d = sink.error("Q563", at.given() ? at : w.loc, key.empty() ? path : path + "." + key,
                         "workload '" + w.name + "' on QP '" + q.name + "' aims at external peer '" + e.name + "' (given values): " + what);
    d.rule = "with exchange values qpo SENDs into the peer's receives, RDMA WRITEs or READs the buffer its values give "
             "(mr: {addr, rkey, length}), or counts the peer's SENDs (op recv)";
    return &d;
  };
  if (!w.script.empty()) {
    refuse(w.script_loc, "script", "scripts cannot run against an external peer yet")->hint = "write 'op: send' (write, read, recv)";
    return;
  }
  if (w.op && *w.op != util::Op::Send && *w.op != util::Op::SendImm && *w.op != util::Op::Write &&
      *w.op != util::Op::WriteImm && *w.op != util::Op::Read && *w.op != util::Op::Recv)
    refuse(w.op_loc, "op", std::string(w.op_spelling()) + " is not supported against given values")->hint =
        "write op: send, send_with_imm, write, write_with_imm, read or recv";
  if (w.remote_mr) refuse(w.remote_mr.loc, "remote_mr", "the peer's buffer is its values' mr (no remote_mr)")->hint = "remove remote_mr";
  if (w.mcast) refuse(w.mcast.loc, "mcast", "a multicast send has no external receiver");
  bool remote = w.op && (*w.op == util::Op::Write || *w.op == util::Op::WriteImm || *w.op == util::Op::Read);
  if (remote && e.values && !e.values->has_mr)
    refuse(e.values->loc, "", std::string("op ") + util::op_info(*w.op).scenario + " needs the peer's buffer, and its values give no mr")->hint =
        "add mr: { addr: ..., rkey: ..., length: ... } to externals." + e.name + ".values";
}

// ibv_rc_pingpong sends SENDs of its -s size and answers each one: the workload must be the
// same conversation (qpo sends `iterations` messages of `size` and receives as many).
void check_workload(const scenario::Workload& w, const Qp& q, const External& e, const scenario::Scenario& s,
                    diag::DiagSink& sink) {
  std::string path = "workloads." + w.name;
  auto refuse = [&](const SourceLoc& at, const std::string& key, const std::string& what) {
    auto& d = sink.error("Q563", at.given() ? at : w.loc, key.empty() ? path : path + "." + key,
                         "workload '" + w.name + "' on QP '" + q.name + "' talks to external peer '" + e.name +
                             "': " + what);
    d.rule = perftest(e) ? "exchange perftest is followed by the tool's own test: RDMA WRITEs, READs or SENDs of one "
                           "size, `iterations` times (or ib_send_lat's ping-pong), from and into qpo's own slots"
                         : "exchange " + std::string(exchange_name(e.exchange)) +
                               " is followed by ibv_rc_pingpong's ping-pong: SENDs of one size, each answered, "
                               "`iterations` times; nothing else is published";
    return &d;
  };
  bool pt = perftest(e);
  if (rdma_cm(e)) {
    check_cm_workload(w, q, e, s, sink);
    return;
  }
  if (given(e)) {
    check_given_workload(w, q, e, sink);
    return;
  }
  if (!w.script.empty()) {
    refuse(w.script_loc, "script", "scripts cannot run against an external peer yet")->hint =
        pt ? "write 'op: write' (or read, send) with size and iterations" : "write 'op: send' with size and iterations";
    return;
  }
  if (w.op && !pt && *w.op != util::Op::Send)
    refuse(w.op_loc, "op", std::string(w.op_spelling()) + " is not part of the tool's conversation")->hint =
        "write 'op: send'";
  if (w.op && pt && *w.op != util::Op::Write && *w.op != util::Op::Read && *w.op != util::Op::Send)
    refuse(w.op_loc, "op", std::string(w.op_spelling()) + " is not one of perftest's bandwidth tests")->hint =
        "write 'op: write' (ib_write_bw), 'op: read' (ib_read_bw) or 'op: send' (ib_send_bw)";
  if (w.op && pt && !e.tool.empty())
    for (const auto& t : External::kPerftestTools)
      if (t.name == e.tool && t.op != *w.op)
        refuse(w.op_loc, "op", std::string(e.tool) + "'s test is op " + util::op_info(t.op).scenario + ", not " +
                                   std::string(w.op_spelling()))
            ->hint = std::string("write 'op: ") + util::op_info(t.op).scenario + "', or change the external's tool";
  if (w.remote_mr)
    refuse(w.remote_mr.loc, "remote_mr", pt ? "the tool's buffer comes in its keys (no remote_mr)"
                                            : "the tool publishes no buffer (no remote_mr)");
  if (w.mcast) refuse(w.mcast.loc, "mcast", "a multicast send has no external receiver");
  if (w.expect_status) refuse(w.expect_loc, "expect", "an expected error status is not supported with an external peer");
  // What an op loop takes that the tool's conversation has no use for: refused, not ignored.
  if (w.local_mr) refuse(w.local_mr.loc, "local_mr", "it sends from and receives into qpo's own slots (no local_mr)");
  if (w.offset_loc.given()) refuse(w.offset_loc, "offset", "it sends from and receives into qpo's own slots (no offset)");
  if (w.workers_loc.given()) refuse(w.workers_loc, "workers", "one QP, one conversation (no workers)");
  if (w.pin_loc.given()) refuse(w.pin_loc, "pin", "it runs on the executor's own thread (no pin)");
  // ib_write_lat writes into qpo's buffer whichever side serves.
  if (pt && w.op && (e.listen || e.tool == "ib_write_lat")) serving_perftest(w, q, e, sink);
  if (pt && e.tool == "ib_write_lat" && q.type >= 0 && q.cap.max_recv_wr == 0) {
    auto& d = sink.error("Q561", q.loc, "qps." + q.name + ".cap.max_recv_wr",
                         "QP '" + q.name + "' has max_recv_wr 0 and plays ib_write_lat (external peer '" + e.name + "')");
    d.rule = "the tool writes into qpo's first slot, qpo writes from its last: the QP's slot buffer needs two";
    d.hint = "give cap.max_recv_wr: 1 or more";
  }
  // Both sides of ib_send_lat receive: the tool's answers (or its first message) need receives.
  bool latency = pt && e.tool == "ib_send_lat";
  if (latency && !e.listen && q.type >= 0 && q.cap.max_recv_wr == 0) {
    auto& d = sink.error("Q561", q.loc, "qps." + q.name + ".cap.max_recv_wr",
                         "QP '" + q.name + "' has max_recv_wr 0 and receives ib_send_lat's answers (external peer '" +
                             e.name + "')");
    d.hint = "give cap.max_recv_wr (e.g. 16)";
  }
}

// qpo serves a perftest client: the tool writes into or reads from qpo's buffer (the QP must
// let it), or sends into qpo's receives (the QP must have a receive queue).
void serving_perftest(const scenario::Workload& w, const Qp& q, const External& e, diag::DiagSink& sink) {
  const auto& op = util::op_info(*w.op);
  if (op.remote_access) {
    // Through rdma_cm (-R) the connection sets the access flags and the READs it accepts itself.
    if (q.cm.given) return;
    const scenario::Attr* flags = nullptr;
    for (const auto& t : q.transitions)
      if (t.bring_up)
        if (const auto* a = t.attr("qp_access_flags")) flags = a;
    uint64_t granted = flags && flags->symbol == scenario::Symbol::None ? flags->number : 0;
    if (!(granted & op.remote_access)) {
      auto& d = sink.error("Q565", flags ? flags->loc : q.loc, "qps." + q.name + ".states.INIT.qp_access_flags",
                           "QP '" + q.name + "' serves " +
                               (e.tool.empty() ? std::string(w.op == util::Op::Read ? "ib_read_bw" : "ib_write_bw") : e.tool) +
                               " (external peer '" + e.name + "') without " + op.access_name + " in its qp_access_flags");
      d.rule = "the tool's client " + std::string(w.op == util::Op::Read ? "reads from" : "writes to") +
               " the buffer qpo advertises; the QP must grant it (else the tool fails with a remote access error)";
      d.hint = "add " + std::string(op.access_name) + " to qps." + q.name + ".states.INIT.qp_access_flags";
    }
    // The READs it accepts at once are what qpo advertises as out_reads: the tool's max_rd_atomic.
    if (w.op == util::Op::Read)
      for (const auto& t : q.transitions)
        if (const auto* a = t.attr("max_dest_rd_atomic"); t.bring_up && a && a->valid &&
                                                             a->symbol == scenario::Symbol::None && a->number == 0) {
          auto& d = sink.error("Q565", a->loc, a->path,
                               "QP '" + q.name + "' serves ib_read_bw (external peer '" + e.name +
                                   "') with max_dest_rd_atomic 0: it accepts no RDMA READ");
          d.hint = "give max_dest_rd_atomic: 16 (qpo tells the tool to keep that many READs in flight)";
        }
  } else if (q.type >= 0 && q.cap.max_recv_wr == 0) {
    auto& d = sink.error("Q561", q.loc, "qps." + q.name + ".cap.max_recv_wr",
                         "QP '" + q.name + "' has max_recv_wr 0 and receives ib_send_bw's SENDs (external peer '" + e.name + "')");
    d.hint = "give cap.max_recv_wr (e.g. 512, the tool's own receive depth)";
  }
}

}  // namespace

void check_externals(const scenario::Scenario& s, diag::DiagSink& sink) {
  if (s.externals.empty()) return;
  std::map<std::string, std::vector<const Qp*>> users;
  for (const auto& q : s.qps)
    if (q.connect && s.external(q.connect.name)) users[q.connect.name].push_back(&q);
  for (const auto& e : s.externals) {
    std::string path = "externals." + e.name;
    if (const auto* q = s.qp(e.name)) {
      auto& d = sink.error("Q105", e.loc, path, "duplicate name '" + e.name + "': a QP has it too");
      d.related.push_back({q->loc, "QP defined here"});
      d.hint = "a QP's connect: must name one thing: rename the external peer";
      continue;
    }
    if (const auto* m = s.mr(e.name); m && perftest(e)) {  // the tool's buffer goes by the external's name
      auto& d = sink.error("Q105", e.loc, path, "duplicate name '" + e.name + "': an MR has it too");
      d.related.push_back({m->loc, "MR defined here"});
      d.hint = "the tool's buffer is published under the external's name: rename one of them";
      continue;
    }
    const auto& qps = users[e.name];
    if (qps.empty()) {
      auto& d = sink.warning("Q560", e.loc, path, "external peer '" + e.name + "' is connected by no QP");
      d.hint = "add 'connect: " + e.name + "' to the QP that talks to it";
      continue;
    }
    if (qps.size() > 1) {
      auto& d = sink.error("Q560", qps[1]->connect.loc, "qps." + qps[1]->name + ".connect",
                           "external peer '" + e.name + "' is connected by QP '" + qps[0]->name + "' and QP '" +
                               qps[1]->name + "'");
      d.rule = "exchange " + std::string(exchange_name(e.exchange)) + " carries one QP's values each way";
      d.related.push_back({qps[0]->connect.loc, "first connected here"});
      continue;
    }
    check_qp(*qps[0], e, sink);
    auto& n = sink.note("Q562", e.loc, path,
                        "external peer '" + e.name + "': qpo checks nothing on its side (" +
                            (given(e) ? std::string("its QP's state, path MTU, PSNs and access are its setup's; qpo takes its "
                                                    "values as given")
                                      : std::string("its path MTU, PSNs, access flags, message size and count come from the "
                                                    "tool's own options")) + ")");
    const auto* cm_tool = External::cm_tool(e.tool);
    n.hint = given(e) ? (e.own_values.empty() ? std::string("qpo takes the peer's values as given; give own_values: FILE "
                                                             "(or -) to hand the peer's setup qpo's QP number, PSN, GID and buffer")
                                              : std::string("qpo writes its QP's values to ") +
                                                    (e.own_values == "-" ? "stdout" : e.own_values) +
                                                    " for the peer's setup; the peer's QP must be at RTR before qpo sends")
             : rdma_cm(e) && cm_tool && cm_tool->buffers
                 ? std::string("run rping with the workload's size and iterations: rping -s -p PORT -S SIZE when it "
                               "serves, rping -c -a QPO_ADDRESS -p PORT -S SIZE -C ITERATIONS -V when it dials")
             : rdma_cm(e) ? (cm_tool && cm_tool->burst
                               ? "run " + std::string(cm_tool->name) +
                                     " with the workload's size and iterations (-S SIZE -C ITERATIONS)" +
                                     (cm_tool->ud ? std::string(" (its port is 7174, fixed: the cm: port must be it)")
                                                  : std::string(" and the cm: port (-p PORT)")) +
                                     "; as client, -s QPO_ADDRESS"
                               : std::string("run ") + (cm_tool ? std::string(cm_tool->name) : std::string("the tool")) +
                                     " with the cm: port (-p PORT)" +
                                     (cm_tool && !cm_tool->qpo_active.value_or(true) ? " and -s QPO_ADDRESS" : ""))
           : perftest(e) ? "run the tool with the workload's size and iterations (" + perftest_tool_name(e, *qps[0], s) +
                               (e.rdma_cm ? " -R" : "") + " -s SIZE -n ITERATIONS) "
                           "and a GID index on RoCE (-x); " +
                               (e.rdma_cm ? std::string("the CM chooses the path MTU")
                                          : "the path MTU is the smaller of the tool's and " + std::to_string(e.mtu))
                         : "run the tool with the workload's size and iterations (ibv_rc_pingpong -s SIZE -n ITERATIONS) and "
                           "the path MTU given here (-m " + std::to_string(e.mtu) + ")";
  }
  std::map<std::string, bool> talked_to;
  for (const auto& w : s.workloads) {
    const Qp* q = s.qp(w.qp.name);
    const External* e = q && q->connect ? s.external(q->connect.name) : nullptr;
    if (!e) continue;
    if (talked_to[e->name] && perftest(*e)) {  // one test per tool run: the conversation ends with it
      auto& d = sink.error("Q563", w.qp.loc.given() ? w.qp.loc : w.loc, "workloads." + w.name + ".qp",
                           "workload '" + w.name + "' is a second workload with external peer '" + e->name +
                               "': the tool runs one test, then closes its connection");
      d.hint = "start the tool again with another external entry (another port) for another test";
    }
    talked_to[e->name] = true;
    check_workload(w, *q, *e, s, sink);
  }
  // Without a workload the tool's half of the conversation never ends: it waits for (or has
  // sent) messages nobody answers, until it is stopped.
  for (const auto& [name, qps] : users) {
    if (qps.size() != 1 || talked_to[name]) continue;
    const auto* e = s.external(name);
    if (given(*e)) continue;  // a DUT's QP brought up and left alone is a scenario too
    if (perftest(*e)) {
      auto& d = sink.error("Q564", e->loc, "externals." + name,
                           "external peer '" + name + "' has no workload on QP '" + qps[0]->name +
                               "': its op says which perftest tool is on the other side");
      d.rule = "op: write is ib_write_bw, read ib_read_bw, send ib_send_bw; the tool waits for its data phase";
      d.hint = "add a workload { qp: " + qps[0]->name + ", op: write, size: SIZE, iterations: N } matching the tool's -s and -n";
      continue;
    }
    auto& d = sink.warning("Q564", e->loc, "externals." + name,
                           "external peer '" + name + "' has no workload on QP '" + qps[0]->name +
                               (rdma_cm(*e) ? "': the tool's conversation will wait for messages qpo never sends or answers"
                                        : "': the tool's ping-pong will wait for messages qpo never sends or answers"));
    d.hint = "add a workload { qp: " + qps[0]->name + ", op: send, size: SIZE, iterations: N } matching the tool's -s and -n";
  }
}

}  // namespace qpo::check
