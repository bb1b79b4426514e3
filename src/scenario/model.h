#pragma once
// The scenario model: what a YAML scenario file says, with a source location on everything
// so later passes can point at the exact line. Names refer to other objects by name; the
// references are checked by check/references, not here.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "spec/rules.h"
#include "util/workload_defaults.h"
#include "util/packet_event_names.h"
#include "util/wire_facts.h"
#include "util/ops.h"
#include "util/shared_list.h"
#include "util/peer_values.h"
#include "util/source_text.h"
#include "util/threshold.h"

namespace qpo::scenario {

using util::SourceLoc;

// Values only known at run time.
enum class Symbol {
  None,
  Peer,    // taken from the connected QP after the out-of-band exchange
  Auto,    // chosen from the device (gid_index, path_mtu)
  Random,  // drawn at run time (PSNs)
  Device,  // the device's configured port
};
const char* symbol_name(Symbol s);

// One ibv_qp_attr field (or ah_attr/grh sub-field) as written, or as filled in by a default.
struct Attr {
  std::string field;      // "min_rnr_timer", "ah_attr", "grh", "dgid"
  SourceLoc key_loc;      // where the key is
  SourceLoc loc;          // where the value is
  std::string path;       // "qps.qa.states.RTR.min_rnr_timer"
  std::string text;       // the value as written ("IBV_MTU_1024", "[remote_write]", "peer")
  Symbol symbol = Symbol::None;
  uint64_t number = 0;    // numeric value when symbol == None (flags: OR of bits)
  bool from_default = false;
  bool valid = true;      // false when the loader already reported the value as bad
  std::vector<Attr> children;  // ah_attr: dlid, sl, ..., grh{...}; grh: dgid, sgid_index, ...
  const Attr* child(std::string_view name) const;
};

struct Expectation {
  SourceLoc loc;
  std::string errno_name;  // "EINVAL"; empty = success expected
  int errno_value = 0;
};

// One ibv_modify_qp call: to `to` from wherever the previous one left the QP.
struct Transition {
  spec::QpState to = spec::QpState::INIT;
  SourceLoc loc;
  std::string path;               // "qps.qa.states.RTR" or "qps.qa.transitions[2]"
  std::vector<Attr> attrs;        // in file order; defaults appended by the validator
  bool use_defaults = true;       // `defaults: false` sends exactly what is written
  bool bring_up = true;           // from `states:` (bring-up) vs `transitions:` (after traffic)
  std::optional<Expectation> expect;

  // Filled in by check/transitions: where the QP is before this call, the attr_mask qpo will
  // pass, and what the rule tables predict the kernel will say.
  spec::QpState from = spec::QpState::RESET;
  spec::Mask mask = 0;
  bool predicted_ok = true;
  spec::CheckResult verdict;

  const Attr* attr(std::string_view field) const;
};

struct QpCap {
  uint32_t max_send_wr = 128, max_recv_wr = 128, max_send_sge = 1, max_recv_sge = 1, max_inline_data = 0;
  SourceLoc loc;
  std::map<std::string, SourceLoc> given;  // which keys the file set
};

struct Ref {
  std::string name;
  SourceLoc loc;
  explicit operator bool() const { return !name.empty(); }
};

struct Object {
  std::string name;
  SourceLoc loc;  // the key that names it
};

struct Host : Object {
  std::string address = "localhost";  // ssh destination, or localhost
  std::string launcher;               // `launcher:` command template (util/command_template.h); "" = by address
};

struct Device : Object {
  Ref host;
  std::string dev_name = "auto";  // rxe0, a GUID, or auto (first active)
  uint32_t port = 1;
  Symbol gid_symbol = Symbol::Auto;  // Auto or None
  uint32_t gid_index = 0;
  std::string gid_ip;  // gid_index: 192.0.2.1 / 2001:db8::1 - the GID with this IP, found at run time
};

struct Pd : Object {
  Ref device;
  bool implicit = false;  // created by default, one per device
};

struct Mr : Object {
  Ref pd;
  uint64_t size = 4096;
  uint32_t access = 0;   // IBV_ACCESS_* bits
  SourceLoc access_loc;
  std::string access_text;
  uint32_t count = 0;  // > 0: a template the loader expands into name.0 .. name.(count-1)
  Ref per_qp;          // `per_qp: GROUP`: count = that QP group's count (perftest --mr_per_qp)
};

// A memory window (ibv_alloc_mw) over part of an MR, bound by a timeline `bind:` step on
// `bind_qp` (type 1: ibv_bind_mw; type 2: an IBV_WR_BIND_MW work request) and invalidated by
// an `invalidate:` step. A workload's `remote_mr:` may name it: the peer then reaches the MR
// through the window's rkey, published after each bind.
struct Mw : Object {
  Ref pd, mr, bind_qp;    // pd: the MR's when not given (the loader fills it in)
  int type = 2;           // 1 or 2
  SourceLoc type_loc;
  uint64_t offset = 0;    // into the MR
  uint64_t length = 0;    // as given; not given = up to the MR's end (the loader resolves it)
  SourceLoc offset_loc, length_loc;  // length_loc: empty when not given
  uint32_t access = 0;    // IBV_ACCESS_* the window grants (mw_access_flags)
  SourceLoc access_loc;
};

// A multicast group (`mcast_groups:`): UD QPs attached to it (ibv_attach_mcast) receive every
// datagram sent to its GID with its qkey. `gid:` is an IPv6 multicast address (ff0e::1234) or
// an IPv4 one (239.1.1.1, taken as the IPv4-mapped GID ::ffff:239.1.1.1, as RoCEv2 maps it).
struct McastGroup : Object {
  std::string gid_text;             // as written
  uint8_t gid[16] = {};             // the GID (IPv4: ::ffff:a.b.c.d)
  bool ipv4 = false;                // written as an IPv4 address (or IPv4-mapped)
  SourceLoc gid_loc;
  uint32_t qkey = 0x11111111;       // what senders put in the work request; members' qkey must match
  SourceLoc qkey_loc;
  uint32_t mlid = 0xC000;           // the multicast LID (InfiniBand; RoCE ignores it)
  SourceLoc mlid_loc;
  std::vector<Ref> members;         // the UD QPs attached (counted groups expanded)
  SourceLoc members_loc;
  // `join: rdma_cm`: members (and senders, send-only) join through rdma_join_multicast; the
  // MULTICAST_JOIN event gives the group's GID, MLID and qkey (RDMA_UDP_QKEY). Else `verbs`.
  bool cm_join = false;
  SourceLoc join_loc;
};

struct Cq : Object {
  Ref device;
  uint32_t depth = 256;
  SourceLoc depth_loc;   // set when the file gives depth
  bool channel = false;  // completion channel for event mode
  // ibv_create_cq_ex with IBV_WC_EX_WITH_COMPLETION_TIMESTAMP; needs the cq_timestamps capability.
  bool timestamps = false;
};

struct Srq : Object {
  Ref pd;
  uint32_t max_wr = 256, max_sge = 1, srq_limit = 0;
  SourceLoc srq_limit_loc;  // set when the file gives srq_limit (ibv_modify_srq arms it after bring-up posts)
};

struct Xrcd : Object {
  Ref device;
};

// An rdma_cm connection (`cm:` on a QP): the CM resolves the peer by IP and brings the QP up
// (RESET->INIT->RTR->RTS with the attributes rdma_init_qp_attr computes) instead of `states:`.
// RC connects over RDMA_PS_TCP, UC over an RDMA_PS_IB id of type UC, UD resolves its peer over
// RDMA_PS_UDP (SIDR).
struct CmSpec {
  bool given = false;
  SourceLoc loc;                 // the `cm:` key
  bool active = true;            // role: active (resolves and connects) or passive (listens)
  SourceLoc role_loc;
  Ref peer;                      // the QP at the other end (none: an active side expecting failure)
  uint32_t port = 7471;
  SourceLoc port_loc;
  std::string address;           // active: the IP it connects to; passive: the IP it binds ("" = any)
  SourceLoc address_loc;
  std::string private_data;      // sent with rdma_connect (active) or rdma_accept (passive)
  std::optional<std::string> reject;  // passive: rdma_reject with this private data
  SourceLoc reject_loc;
  // An expected outcome other than a connection (active side): the CM event instead of the
  // CONNECT_RESPONSE/ESTABLISHED ("REJECTED", "UNREACHABLE", "ADDR_ERROR", "ROUTE_ERROR",
  // "CONNECT_ERROR") or "timeout" (no event within `within_ms`).
  std::string expect_event;
  std::optional<std::string> expect_reason, expect_private_data;
  uint64_t within_ms = 0;        // the wait for the expected event; 0 = the run's phase timeout
  SourceLoc expect_loc;
  // The QP's state once the CM flow is done: RTS when it connects, INIT for an active side
  // whose connection fails after INIT, RESET otherwise.
  // exchange_only (perftest -z): the connection carries the pair's exchange values in its
  // private data (cm/exchange_data.h) on ids with no QP; the QPs come up by their `states:`.
  bool exchange_only = false;
  SourceLoc exchange_only_loc;
  bool brings_up() const { return given && !exchange_only; }  // the CM makes INIT/RTR/RTS
  spec::QpState end_state() const {
    if (reject) return spec::QpState::RESET;
    if (expect_event.empty()) return spec::QpState::RTS;
    return expect_event == "REJECTED" || expect_event == "UNREACHABLE" || expect_event == "CONNECT_ERROR" ||
                   expect_event == "timeout"
               ? spec::QpState::INIT
               : spec::QpState::RESET;
  }
};

struct Qp : Object {
  Ref pd;
  std::string type_name;
  int type = -1;  // index into RuleTable::types()
  spec::QpType qp_type = spec::QpType::Unknown;  // what code compares (type_name is for messages)
  SourceLoc type_loc;
  Ref send_cq, recv_cq, srq, xrcd;
  QpCap cap;
  bool sq_sig_all = false;
  Ref connect;                       // peer QP, possibly on another host
  uint32_t count = 0;                // > 0: a template the loader expands into name.0 .. name.(count-1)
  SourceLoc count_origin;            // the --set flag or matrix value that set count:, if one did
  // The bring-up path, then the extra transitions. The members of a counted group share their
  // template's list (util/shared_list.h) until one of them needs its own.
  util::SharedList<Transition> transitions;
  CmSpec cm;                         // `cm:`: rdma_cm brings it up (no `states:`)
};

// A value for a script's `args:`: a YAML scalar, typed the way YAML reads it (40 is an
// integer, 2.5 a number, true a boolean, 64KiB and "40" strings), or a list of them.
struct ScriptValue {
  enum class Kind { Bool, Int, Number, String, List };
  Kind kind = Kind::String;
  bool boolean = false;
  int64_t integer = 0;
  double number = 0;
  std::string text;                // the scalar as written (the value itself for strings)
  std::vector<ScriptValue> items;  // lists
};

struct ScriptArg {
  std::string key;
  SourceLoc loc;      // the key
  ScriptValue value;
};

// A pass/fail limit on one field of a script workload's summary (what report() returns):
// `min_bw: 40MB/s` fails the run when bw_avg < 40. scenario/thresholds.h lists the kinds.
using util::Threshold;  // util/threshold.h: the run judges it too

// A traffic pattern between a QP and its peer: a built-in op loop (`op:`) or a Lua script.
struct Workload : Object {
  Ref qp;
  std::vector<Ref> more_qps;  // `qp: [s1, s2, s3]` (scripts only): s2, s3 are initiators too
  SourceLoc more_qps_loc;     // the list
  std::optional<util::Op> op;  // `op:`, whichever of its names the file used; unset for a script
  SourceLoc op_loc;
  Ref local_mr, remote_mr;
  uint64_t size = util::kOpDefaults.size;  // a script's own defaults apply when not given (size_loc)
  uint64_t offset = 0;  // op workloads: where in the local and the remote MR the bytes are
  SourceLoc offset_loc;
  uint64_t iterations = util::kOpDefaults.iterations;
  SourceLoc size_loc, iterations_loc;  // set when the file gives them (scripts get only those)
  std::string script;  // builtin:name or a path; empty = built-in op loop
  SourceLoc script_loc;
  std::vector<ScriptArg> args;          // `args:` for the script, in file order
  SourceLoc args_loc;
  std::vector<Threshold> thresholds;    // `thresholds:`, in file order
  SourceLoc thresholds_loc;
  std::optional<std::string> expect_status;  // IBV_WC_REM_ACCESS_ERR ...
  SourceLoc expect_loc;

  std::string group;  // a member of an op workload written on a QP group: the name written
  Ref mcast;          // `mcast: G`: a UD send to multicast group G (every member receives it)

  // Threads that drive the workload's QPs (`workers:`); 0 = the default: one thread for an
  // op workload on a group (perftest -q), one per QP for a script. `pin:` the CPUs, worker K
  // on pin[K % size] (sched_setaffinity).
  uint32_t workers = 0;
  SourceLoc workers_loc;
  std::vector<int64_t> pin;
  SourceLoc pin_loc;
  bool on_group = false;  // written on a QP group or a slice (a script's initiators came from one)
  // `invalidate: W` (op send_with_inv): the type 2 window on the receiver's side whose rkey the
  // SEND invalidates (IBV_WR_SEND_WITH_INV; the rkey is the one published after W's bind).
  Ref invalidate;

  // Every QP that initiates: qp, then more_qps.
  std::vector<Ref> initiators() const;
  const ScriptArg* arg(std::string_view key) const;
  // The op the built-in loop posts; nullptr for a script workload (or an op the loader refused).
  const util::OpInfo* builtin_op() const { return script.empty() && op ? &util::op_info(*op) : nullptr; }
  // The op as messages name it, in the scenario's spelling ("rdma_write"); "" when unset.
  const char* op_spelling() const { return op ? util::op_info(*op).scenario : ""; }
};

// Network faults injected under a device (Soft-RoCE: tc netem on its netdev) while
// workloads run (`during: traffic`) or for the whole run after setup (`during: all`).
struct Fault : Object {
  Ref device;
  double loss = 0, corrupt = 0, duplicate = 0, reorder = 0;  // percent
  uint64_t delay_us = 0;
  std::string during = "traffic";
};

// `wire: events:` - a deterministic packet event on the packets one QP sends. They arrive at
// its connected peer's host, whose netdev's ingress runs qpo's tc BPF program (src/wire):
// among the packets it counts (`packets:`), the one at a PSN relative to the first counted
// one (`psn:`) and which transmission of it, or the Nth counted one (`nth:`), gets `action`.
// Armed with the first workload stage, removed after the last.
struct PacketEvent : Object {
  Ref qp;
  util::EventPackets packets = util::EventPackets::Requests;
  std::optional<uint32_t> psn, nth;  // exactly one
  uint32_t transmission = 1;         // psn: 0 every transmission, k the kth (1: the first)
  util::EventAction action = util::EventAction::Drop;
  uint64_t delay_us = 0;             // action delay: how long (a netem band on the sender's egress)
};

// `wire: expect:` - a fact of a QP's packets, read from its host's capture after the run's
// traffic (the run captures when the scenario expects anything of the wire): a count in
// [min, max], go-back-N kept, or timings within `factor` of what the attributes say.
struct WireExpect {
  SourceLoc loc;
  std::string path;  // wire.expect[2]
  Ref qp;            // a QP, or a counted group (each member)
  util::WireFact fact = util::WireFact::Requests;
  uint64_t min = 0, max = UINT64_MAX;
  double factor = 0;
  std::string text;  // the expectation as written: "1", ">= 1", "2..4", "true", "4x"
};

// rdmacm-utils' tools qpo talks to over an rdma_cm connection, and their conversation (read
// from librdmacm/examples): cmatose.c's server sends its -C messages of -S bytes at once, the
// client receives them all, then sends as many back, and the server disconnects (the client
// waits for it); rdma_client sends one 16-byte message, rdma_server answers with one.
// udaddy.c (UD, RDMA_PS_UDP): the client sends its -C messages first, each a SEND with
// immediate data carrying its QP number, which is how the server learns where to answer (the
// address from the message's GRH); the server answers with as many, the same way.
// rping.c, per ping: the client SENDs its start buffer's {addr, rkey, length} (16 bytes, big
// endian), the server RDMA READs it and SENDs a go-ahead; the client SENDs its sink buffer's,
// the server RDMA WRITEs what it read there and SENDs a go-ahead; the client compares (-V).
// The client disconnects after its -C pings; the server waits for that.
struct CmTool {
  std::string_view name;
  std::optional<bool> qpo_active;  // the cm: role qpo's QP must have (rdma_server serves: qpo is active)
  bool server_sends_first = false; // ucmatose: the server streams first; the others: the client sends first
  bool burst = false;              // each side sends all its messages before it waits for the other's
  uint32_t size = 0, count = 0;    // the tool's fixed message size and count (0: its -S and -C say)
  bool ud = false;                 // udaddy: a UD QP, and every SEND carries the sender's QPN as immediate data
  bool client_disconnects = false; // rping: the server waits for the client's DREQ (the others disconnect themselves)
  bool buffers = false;            // rping: the pings move through a buffer of qpo's (the workload's local_mr)
};
inline constexpr CmTool kCmTools[] = {
    {.name = "ucmatose", .server_sends_first = true, .burst = true},
    {.name = "rdma_server", .qpo_active = true, .size = 16, .count = 1},
    {.name = "rdma_client", .qpo_active = false, .size = 16, .count = 1},
    {.name = "udaddy", .burst = true, .ud = true},
    {.name = "rping", .client_disconnects = true, .buffers = true}};

// A peer outside the scenario (`externals:`): a stock tool or a device under test at the other
// end of one QP's connection (`connect: NAME` on the QP). qpo learns its values over the tool's
// own out-of-band exchange and checks nothing on its side.
struct External : Object {
  // IbvPingpong: ibv_rc_pingpong's and ibv_ud_pingpong's TCP exchange ("LID:QPN:PSN:GID").
  // Perftest: perftest's TCP exchange (ib_write_bw, ib_read_bw, ib_send_bw, ib_send_lat,
  // ib_write_lat); with `rdma_cm: true` the tool runs with -R: its exchange goes over an RDMA
  // connection of its own and its test QP connects through the CM (the QP's `cm:`).
  // RdmaCm: the connection manager carries it (the QP's `cm:` names the external as its peer):
  // rdmacm-utils' ucmatose, rdma_server, rdma_client and udaddy.
  // Values: no exchange of a tool's: the peer's verbs values are written in the scenario
  // (`values:`) or read from a file (`values_file:`), and qpo writes its QP's own (`own_values:`)
  // for whoever sets the peer up (a DUT's script).
  enum class Exchange { IbvPingpong, Perftest, RdmaCm, Values };
  // The one table of their names, as a scenario spells them.
  static constexpr std::pair<Exchange, std::string_view> kExchangeNames[] = {{Exchange::IbvPingpong, "ibv_pingpong"},
                                                                             {Exchange::Perftest, "perftest"},
                                                                             {Exchange::RdmaCm, "rdma_cm"},
                                                                             {Exchange::Values, "values"}};
  // exchange values: the peer's QP (and the buffer qpo's RDMA WRITEs and READs aim at).
  using GivenValues = util::PeerValues;
  static std::string_view exchange_name(Exchange x) {
    for (const auto& [e, name] : kExchangeNames)
      if (e == x) return name;
    return "?";
  }
  // perftest's tools qpo plays against, and the op each one's test is. Without `tool:` the
  // workload's op picks the bandwidth test (write: ib_write_bw ...).
  struct PerftestTool {
    std::string_view name;
    util::Op op;
    bool latency;  // a ping-pong of single messages, not a stream
  };
  static constexpr PerftestTool kPerftestTools[] = {{"ib_write_bw", util::Op::Write, false},
                                                    {"ib_read_bw", util::Op::Read, false},
                                                    {"ib_send_bw", util::Op::Send, false},
                                                    {"ib_send_lat", util::Op::Send, true},
                                                    {"ib_write_lat", util::Op::Write, true}};
  static const CmTool* cm_tool(std::string_view name) {
    for (const auto& t : kCmTools)
      if (t.name == name) return &t;
    return nullptr;
  }
  Exchange exchange = Exchange::IbvPingpong;
  SourceLoc exchange_loc;
  std::string tool;    // perftest: one of kPerftestTools ("" = by the workload's op); rdma_cm: one of kCmTools
  SourceLoc tool_loc;
  std::string server;  // the tool serves there and qpo connects to it ("" = qpo listens)
  SourceLoc server_loc;
  bool listen = false; // qpo is the server: it waits for the tool to connect
  SourceLoc listen_loc;
  std::string from;    // listen: the only address the tool may connect from ("" = any)
  SourceLoc from_loc;
  uint16_t port = 18515;  // the tool's default (-p)
  SourceLoc port_loc;
  uint32_t mtu = 1024;    // the path MTU the tool uses (its -m; its default is 1024)
  SourceLoc mtu_loc;
  bool rdma_cm = false;   // perftest's -R: the test QP connects through rdma_cm on `port`
  SourceLoc rdma_cm_loc;
  // exchange values: the peer's values written here, or the file qpo reads them from (JSON with
  // the same keys, waited for up to the phase timeout), and where qpo writes its QP's own
  // ("-": stdout), before it reads the peer's.
  std::optional<GivenValues> values;
  std::string values_file, own_values;
  SourceLoc values_file_loc, own_values_loc;
};

// One step of the run after bring-up. The scenario's `timeline:` lists them in order; without
// one the loader writes today's default order (scenario/timeline.h): smoke, the workloads in
// waves, the extra transitions in rounds, smoke again after a recovery path.
struct TimelineStep {
  enum class Kind { Smoke, Workloads, Transition, Barrier, Pause, Event, SrqLimit, BindMw, InvalidateMw, Link };
  struct QpTransition {
    std::string qp;
    size_t index = 0;  // into that QP's `transitions`
  };
  Kind kind = Kind::Smoke;
  SourceLoc loc;
  std::string path;                       // "timeline[3]"
  std::vector<Ref> workloads;             // Workloads: these run together
  std::vector<Ref> qps;                   // Transition: the QPs as written
  std::vector<QpTransition> transitions;  // Transition: one ibv_modify_qp per QP named
  std::string label;                      // Barrier: its name in the run log
  uint64_t pause_ms = 0;                  // Pause
  bool after_recovery = false;            // the default order's last smoke: pairs that went through RESET
  // Event: an asynchronous event that must come (`event:`) or must not (`forbid:`) on `on`.
  std::string event;                      // util/async_event_names.h's spelling: IBV_EVENT_SRQ_LIMIT_REACHED
  int event_value = -1;                   // enum ibv_event_type
  Ref on;                                 // Event: the QP, SRQ, CQ or device; SrqLimit: the SRQ
  bool forbid = false;
  uint64_t within_ms = 0;                 // Event: how long to wait; 0 = the run's timeout (event) / none (forbid)
  uint32_t srq_limit = 0;                 // SrqLimit: ibv_modify_srq(IBV_SRQ_LIMIT) re-arms the limit
  std::vector<Ref> mws;                   // BindMw, InvalidateMw: the memory windows
  // Link: the netdev under device `on` goes down or up (`label`: "down", "up"); rxe raises
  // IBV_EVENT_PORT_ERR / IBV_EVENT_PORT_ACTIVE on its port.
};
const char* timeline_kind_name(TimelineStep::Kind k);
// The rdma_cm port space of a `cm:` QP's ids: RDMA_PS_UDP for UD, RDMA_PS_IB for a UC QP the
// CM brings up (the only space whose ids take the caller's QP type), else RDMA_PS_TCP
// (exchange_only ids carry no QP). Listeners of different spaces never clash on a port.
const char* cm_port_space(const Qp& q);

// A counted group: `count: N` on a QP or an MR (members name.0 .. name.(N-1)), or an op
// workload written on a QP group or a slice of one (members name.I for the QPs' indexes I).
struct Group {
  enum class Kind { Qp, Mr, Workload };
  std::string name;
  SourceLoc loc;
  Kind kind = Kind::Qp;
  uint32_t first = 0;  // the first member's index (a workload on a slice cli[4:8]: 4)
  uint32_t count = 0;
  SourceLoc count_origin;  // the --set flag or matrix value that set a QP group's count:, if one did
  std::string member(uint32_t index) const { return name + "." + std::to_string(index); }
  bool holds(uint32_t index) const { return index >= first && index - first < count; }
};
const char* group_kind_name(Group::Kind k);  // "qp", "mr", "workload"

struct Scenario {
  std::string file;
  int version = 1;
  std::string name, description;
  std::vector<std::string> tags;
  std::vector<std::string> requires_caps;  // xrc, raw_packet, odp, srq, atomic
  SourceLoc requires_loc;                  // the `requires:` list
  bool has_matrix = false;                 // a `matrix:` section (suite/matrix.h reads it): no need to look again
  // std::map keeps lookups simple; `order` keeps file order for output.
  std::vector<Host> hosts;
  std::vector<Device> devices;
  std::vector<Pd> pds;
  std::vector<Mr> mrs;
  std::vector<Cq> cqs;
  std::vector<Srq> srqs;
  std::vector<Xrcd> xrcds;
  std::vector<Qp> qps;
  std::vector<Workload> workloads;
  std::vector<Fault> faults;
  std::vector<PacketEvent> packet_events;  // wire: events:
  std::vector<WireExpect> wire_expects;    // wire: expect:
  std::vector<Mw> mws;
  std::vector<McastGroup> mcast_groups;
  std::vector<External> externals;
  std::vector<TimelineStep> timeline;  // what runs after bring-up, in order
  bool timeline_given = false;         // the file wrote `timeline:` (else the loader wrote the default)
  std::vector<Group> groups;           // counted QPs and MRs, group workloads (already expanded)
  const Group* group(std::string_view n, Group::Kind kind) const {
    for (const auto& g : groups)
      if (g.kind == kind && g.name == n) return &g;
    return nullptr;
  }

  // Name lookups are indexed: scenarios with 10,000s of QPs must validate in linear time.
  // Sections only grow (push_back) while loading, so an index catches up incrementally.
  template <typename T>
  struct Index {
    std::unordered_map<std::string, size_t> by_name;
    size_t covered = 0;
    const T* data = nullptr;
    const T* find(const std::vector<T>& v, std::string_view name) {
      // A reallocated or replaced section starts over (amortised O(1) per element: vectors
      // grow geometrically); otherwise only the new tail is added.
      if (v.data() != data || covered > v.size()) {
        by_name.clear();
        covered = 0;
        data = v.data();
      }
      for (; covered < v.size(); ++covered) by_name.emplace(v[covered].name, covered);
      auto it = by_name.find(std::string(name));
      return it == by_name.end() || it->second >= v.size() ? nullptr : &v[it->second];
    }
  };
  const Host* host(std::string_view n) const { return index_.hosts.find(hosts, n); }
  const Device* device(std::string_view n) const { return index_.devices.find(devices, n); }
  const Pd* pd(std::string_view n) const { return index_.pds.find(pds, n); }
  const Mr* mr(std::string_view n) const { return index_.mrs.find(mrs, n); }
  const Cq* cq(std::string_view n) const { return index_.cqs.find(cqs, n); }
  const Srq* srq(std::string_view n) const { return index_.srqs.find(srqs, n); }
  const Xrcd* xrcd(std::string_view n) const { return index_.xrcds.find(xrcds, n); }
  const Qp* qp(std::string_view n) const { return index_.qps.find(qps, n); }
  const Workload* workload(std::string_view n) const { return index_.workloads.find(workloads, n); }
  const Fault* fault(std::string_view n) const { return index_.faults.find(faults, n); }
  // The QPs a `wire:` entry names: the QP, or each member of a counted QP group; empty when
  // the name is neither.
  std::vector<std::string> qp_or_members(std::string_view n) const {
    if (qp(n)) return {std::string(n)};
    std::vector<std::string> out;
    if (const Group* g = group(n, Group::Kind::Qp))
      for (uint32_t i = g->first; i < g->first + g->count; ++i) out.push_back(g->member(i));
    return out;
  }
  const PacketEvent* packet_event(std::string_view n) const {
    for (const auto& e : packet_events)
      if (e.name == n) return &e;
    return nullptr;
  }
  const Mw* mw(std::string_view n) const { return index_.mws.find(mws, n); }
  const McastGroup* mcast_group(std::string_view n) const {  // few groups: no index
    for (const auto& g : mcast_groups)
      if (g.name == n) return &g;
    return nullptr;
  }
  const External* external(std::string_view n) const {  // few externals: no index
    for (const auto& e : externals)
      if (e.name == n) return &e;
    return nullptr;
  }
  // Position of a QP in `qps` (its ordinal), or -1.
  int qp_ordinal(std::string_view n) const {
    const Qp* q = qp(n);
    return q ? static_cast<int>(q - qps.data()) : -1;
  }

  // The host a QP lives on (through pd -> device -> host); empty when references dangle.
  std::string host_of_qp(const Qp& q) const;
  std::string host_of_device(std::string_view device_name) const;
  const Device* device_of_qp(const Qp& q) const;
  // The hosts that take part, in file order: those that own a device (the others have
  // nothing to do). A run has a session, a channel member and a report part for each.
  std::vector<std::string> active_hosts() const;

 private:
  struct Indexes {
    Index<Host> hosts;
    Index<Device> devices;
    Index<Pd> pds;
    Index<Mr> mrs;
    Index<Cq> cqs;
    Index<Srq> srqs;
    Index<Xrcd> xrcds;
    Index<Qp> qps;
    Index<Workload> workloads;
    Index<Fault> faults;
    Index<Mw> mws;
  };
  mutable Indexes index_;
};

}  // namespace qpo::scenario
