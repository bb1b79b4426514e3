#pragma once
// An `externals:` entry, lowered: the stock tool at the other end of one QP, and how qpo meets
// it (exec/external_exchange.h speaks the exchange, exec/external_pingpong.h and
// exec/external_perftest.h the conversation that follows).
#include <cstdint>
#include <optional>
#include <string>

#include "plan/qp_id.h"
#include "scenario/model.h"
#include "util/ops.h"

namespace qpo::plan {

struct ExternalPeer {
  using Exchange = scenario::External::Exchange;
  std::string name;       // the entry's name: the directory key its values go under
  std::string qp, host;   // the scenario's QP that connects to it, and that QP's host
  // By id (plan/qp_id.h): its QP's, and its own as a peer (the QP count + its place in
  // Plan::externals): the exchange directory's keys.
  QpId qp_id = kNoQp;
  ObjectId peer_id = kNoObject;
  bool ud = false;        // the QP is UD: the tool is ibv_ud_pingpong (qkey 0x11111111, AH per peer)
  Exchange exchange = Exchange::IbvPingpong;
  std::string server;     // qpo connects to the tool there; "" = qpo listens for it
  std::string from;       // qpo listens: the only address the tool may connect from ("" = any)
  uint16_t port = 18515;
  uint32_t mtu = 1024;    // the tool's path MTU (ibv_pingpong), or the one qpo offers (perftest), in bytes
  // The workload on the QP: with perftest its op says which tool is on the other side
  // (write: ib_write_bw, read: ib_read_bw, send: ib_send_bw). Empty: no workload.
  std::string workload;
  std::optional<util::Op> op;
  uint64_t size = 0, iterations = 0;
  // perftest: the RDMA READs qpo's QP accepts at once (its RTR max_dest_rd_atomic), which the
  // tool takes as its max_rd_atomic.
  uint32_t out_reads = 1;
  uint32_t max_rd_atomic = 1;  // the QP's RTS max_rd_atomic: its READs at once, at most the tool's out_reads
  bool latency = false;   // perftest: ib_send_lat (a ping-pong of SENDs), not a bandwidth test
  // perftest's -R: the exchange goes over the tool's own RDMA control connection
  // (cm/perftest_control.h) and its test QP connects through rdma_cm (the QP's cm:, on `port`):
  // the opening and one keys hand-shake before the test QPs connect (ExternalExchange), one
  // more after, then the hand-shakes a TCP test has around its RTR and RTS (the workload's
  // start: the tool's buffer comes in them).
  bool test_over_cm = false;
  // exchange values: the peer's values as the scenario gives them (or nullopt: read from
  // values_file when the exchange step runs), and where qpo writes its QP's own ("-": stdout).
  std::optional<util::PeerValues> values;
  std::string values_file, own_values;
  // rdma_cm: the QP's cm: connects to the tool (qpo_active) or accepts it; the tool's
  // conversation (scenario::External::kCmTools): which side sends first, and whether each side
  // sends all its messages before it waits for the other's (ucmatose) or one at a time.
  std::string cm_tool;
  bool qpo_active = false;
  bool server_sends_first = false;
  bool burst = false;
  // udaddy: each SEND carries the sender's QP number as immediate data; the side that answers
  // learns where to from the first message (its GRH's address, its immediate QPN).
  bool imm_qpn = false;
  // rping: each ping moves through a buffer of qpo's (the workload's local_mr: start and sink
  // halves as client, the READ's destination as server); the client disconnects, the server
  // waits for it.
  bool buffers = false;
  bool client_disconnects = false;

  bool rdma_cm() const { return exchange == Exchange::RdmaCm; }
  bool qpo_listens() const { return rdma_cm() ? !qpo_active : server.empty(); }
  // Who sends first. The tools' clients drive: ibv_rc_pingpong's sends the first message,
  // perftest's bandwidth clients post the whole run, rdma_client sends before rdma_server
  // answers; ucmatose's server sends first. qpo is the initiator when it takes that side.
  bool qpo_initiates() const { return server_sends_first ? qpo_listens() : !qpo_listens(); }
  // Messages each side sends before it waits for the other's: all of them (ucmatose) or one.
  uint64_t messages_per_turn() const { return burst && iterations ? iterations : 1; }
  bool perftest() const { return exchange == Exchange::Perftest; }
  bool given() const { return exchange == Exchange::Values; }
  // ib_write_lat: each side RDMA WRITEs into the other's buffer and polls its last byte; the
  // tool's SERVER writes first (write_lat's loop), unlike its other tests.
  bool write_latency() const { return perftest() && latency && op == util::Op::Write; }
  // The side whose message opens each round trip of a latency test.
  bool qpo_writes_first() const { return write_latency() ? qpo_listens() : qpo_initiates(); }
  // perftest's keys hand-shakes before RTR: ib_write_lat syncs once more than the others.
  int keys_before_rtr() const { return write_latency() ? 2 : 1; }
  // The keys hand-shakes of the exchange step (before the test QP's RTR, or before its CM
  // connection with -R), and those after its CM connection (-R: a sync, then all the tool's
  // hand-shakes around a TCP test's RTR and RTS).
  int keys_in_exchange() const { return test_over_cm ? 1 : keys_before_rtr(); }
  int keys_after_cm() const { return test_over_cm ? 1 + keys_before_rtr() + 2 : 0; }
  const char* tool() const {
    if (given()) return "the peer of the given values";
    if (rdma_cm()) return cm_tool.c_str();
    if (!perftest()) return ud ? "ibv_ud_pingpong" : "ibv_rc_pingpong";
    if (latency) return op == util::Op::Write ? "ib_write_lat" : "ib_send_lat";
    if (op == util::Op::Read) return "ib_read_bw";
    if (op == util::Op::Send) return "ib_send_bw";
    return "ib_write_bw";
  }
};

}  // namespace qpo::plan
