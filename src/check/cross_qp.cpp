// Checks across a connected pair: matching types, mutual connect, PSNs, MTU and qkey that
// agree, and workloads whose responder grants the access they need.
#include <cerrno>

#include "check/validate.h"
#include "util/strings.h"
#include "util/ops.h"

namespace qpo::check {

namespace {

// The largest path MTU any port has (IBV_MTU_4096): a UD message is at most one MTU.
constexpr uint64_t kLargestMtu = 4096;

using scenario::Qp;
using scenario::Symbol;

// The last literal value of `field` set by a successful bring-up transition, if any.
const scenario::Attr* literal(const Qp& q, std::string_view field) {
  const scenario::Attr* found = nullptr;
  for (const auto& t : q.transitions) {
    if (!t.bring_up || !t.predicted_ok) continue;
    if (const auto* a = t.attr(field); a && a->valid && a->symbol == Symbol::None) found = a;
  }
  return found;
}

const scenario::Attr* any_value(const Qp& q, std::string_view field) {
  const scenario::Attr* found = nullptr;
  for (const auto& t : q.transitions)
    if (t.bring_up)
      if (const auto* a = t.attr(field)) found = a;
  return found;
}

bool compatible_types(const Qp& a, const Qp& b) {
  if (a.qp_type == spec::QpType::XRC_SEND) return b.qp_type == spec::QpType::XRC_RECV;
  if (a.qp_type == spec::QpType::XRC_RECV) return b.qp_type == spec::QpType::XRC_SEND;
  return a.type == b.type;  // the same row of the rule table's types
}

class CrossChecker {
 public:
  CrossChecker(const scenario::Scenario& s, diag::DiagSink& sink) : s_(s), sink_(sink) {}

  void run() {
    for (const auto& q : s_.qps) pair(q);
    for (const auto& w : s_.workloads) workload(w);
    for (const auto& f : s_.faults) fault(f);
  }

  // rxe (and HCAs) deliver traffic between QPs of one device internally: a fault on that
  // device's netdev never sees it.
  void fault(const scenario::Fault& f) {
    for (const auto& w : s_.workloads) {
      const Qp* q = s_.qp(w.qp.name);
      const Qp* p = q ? s_.qp(q->connect.name) : nullptr;
      if (!q || !p) continue;
      const auto* dq = s_.device_of_qp(*q);
      const auto* dp = s_.device_of_qp(*p);
      if (!dq || !dp || dq != dp || dq->name != f.device.name) continue;
      auto& d = sink_.warning("Q511", f.device.loc, "faults." + f.name + ".device",
                              "workload '" + w.name + "' runs between QPs of device '" + dq->name +
                                  "'; the device short-cuts that traffic, so fault '" + f.name + "' cannot touch it");
      d.rule = "rxe loops back packets between its own QPs (RXE_LOOPBACK_MASK) without the netdev";
      d.hint = "put the two ends on different hosts (or devices on different netdevs)";
    }
  }

 private:
  void pair(const Qp& q) {
    if (!q.connect) return;
    const Qp* p = s_.qp(q.connect.name);
    if (!p || p == &q || q.type < 0 || p->type < 0) return;
    std::string path = "qps." + q.name + ".connect";
    if (!compatible_types(q, *p)) {
      auto& d = sink_.error("Q501", q.connect.loc, path,
                            q.type_name + " QP '" + q.name + "' cannot connect to " + p->type_name + " QP '" + p->name + "'");
      d.rule = "connected QPs must be the same transport (RC-RC, UC-UC, XRC_SEND-XRC_RECV)";
      d.related.push_back({p->type_loc, "peer type declared here"});
      return;
    }
    bool connected = q.qp_type != spec::QpType::UD;
    if (connected && p->connect.name != q.name) {
      auto& d = sink_.error("Q502", q.connect.loc, path,
                            "'" + q.name + "' connects to '" + p->name + "', but '" + p->name + "' " +
                                (p->connect ? "connects to '" + p->connect.name + "'" : std::string("has no connect:")));
      d.rule = "a " + q.type_name + " connection is one QP on each side, each naming the other";
      d.hint = "add 'connect: " + q.name + "' to QP '" + p->name + "'";
      d.related.push_back({p->loc, "peer QP declared here"});
    }
    if (q.name < p->name || !connected) {
      agree_psn(q, *p);
      agree_psn(*p, q);
    }
    if (q.name < p->name) {
      agree(q, *p, "path_mtu", "Q504", "both ends of a connection must use the same path MTU",
            "a packet longer than the responder's path MTU is rejected: Soft-RoCE NAKs it (the sender sees IBV_WC_REM_INV_REQ_ERR), other devices may drop it silently");
    }
    if (!connected && (p->connect.name != q.name || q.name < p->name)) agree_qkey(q, *p);
  }

  void agree_psn(const Qp& sender, const Qp& receiver) {
    const auto* sq = literal(sender, "sq_psn");
    const auto* rq = literal(receiver, "rq_psn");
    if (!sq || !rq || sq->number == rq->number) return;
    auto& d = sink_.warning("Q503", rq->loc, rq->path,
                            "rq_psn " + util::hex(rq->number) + " of '" + receiver.name + "' differs from sq_psn " +
                                util::hex(sq->number) + " of its sender '" + sender.name + "'");
    d.rule = "the responder's expected PSN must equal the requester's first PSN";
    d.hint = "use rq_psn: peer, or make them equal (ignore if this is a PSN-mismatch test)";
    d.related.push_back({sq->loc, "sender's sq_psn"});
  }

  void agree(const Qp& a, const Qp& b, const char* field, const char* code, const char* rule, const char* why) {
    const auto* x = literal(a, field);
    const auto* y = literal(b, field);
    if (!x || !y || x->number == y->number) return;
    auto& d = sink_.warning(code, y->loc, y->path,
                            std::string(field) + " differs between '" + a.name + "' (" + x->text + ") and '" + b.name +
                                "' (" + y->text + ")");
    d.rule = rule;
    d.hint = std::string(why) + "; use 'auto' on both ends";
    d.related.push_back({x->loc, "other end"});
  }

  void agree_qkey(const Qp& a, const Qp& b) {
    const auto* x = literal(a, "qkey");
    const auto* y = literal(b, "qkey");
    if (!x || !y || x->number == y->number) return;
    auto& d = sink_.warning("Q506", y->loc, y->path, "UD qkey differs between '" + a.name + "' and '" + b.name + "'");
    d.rule = "a UD receiver drops datagrams whose qkey does not match its own";
    d.related.push_back({x->loc, "other qkey"});
  }

  void workload(const scenario::Workload& w) {
    const Qp* q = s_.qp(w.qp.name);
    const util::OpInfo* op = w.op ? &util::op_info(*w.op) : nullptr;
    if (!q || !op || q->type < 0) return;
    std::string path = "workloads." + w.name;
    bool atomic = op->atomic;
    bool rdma = op->remote && !atomic;
    bool read = op->op == util::Op::Read;
    bool send_only = q->qp_type == spec::QpType::UD || q->qp_type == spec::QpType::RAW_PACKET;
    if ((send_only && (rdma || atomic)) || (q->qp_type == spec::QpType::UC && (read || atomic))) {
      auto& d = sink_.error("Q509", w.op_loc, path + ".op", q->type_name + " QPs cannot do " + op->scenario);
      d.rule = "transport services: UD and RAW_PACKET send only; UC sends and writes; RC everything";
      return;
    }
    if (q->qp_type == spec::QpType::UD && w.script.empty() && w.size > kLargestMtu) {
      auto& d = sink_.error("Q515", w.size_loc.given() ? w.size_loc : w.loc, path + ".size",
                            "a UD message is one packet: size " + std::to_string(w.size) +
                                " B is above " + std::to_string(kLargestMtu) + " B, the largest path MTU (IBV_MTU_4096)");
      d.rule = "a UD message travels as a single packet, so it may be at most the path MTU; a larger one never arrives";
      d.hint = "send at most the port's active MTU (qpo devices lists it; RoCE on a 1500-byte netdev: 1024)";
    }
    if (w.mcast) return;  // a send to a multicast group (check/multicast.cpp)
    if (op->op == util::Op::Recv) {
      // A peer of given values (exchange values) sends from outside the scenario too.
      if (const auto* e = q->connect ? s_.external(q->connect.name) : nullptr; e && e->exchange == scenario::External::Exchange::Values)
        return;
      auto& d = sink_.error("Q556", w.op_loc, path + ".op", "workload '" + w.name + "' only receives (op recv) but names no multicast group");
      d.rule = "op recv counts what a sender outside the scenario sends: to a multicast group the QP is a member of, or "
               "to a QP connected to an external peer of given values (exchange values)";
      d.hint = "add 'mcast: <group>' (with this QP among its members), or send with op: send";
      return;
    }
    if (!q->connect) {
      auto& d = sink_.error("Q502", w.qp.loc, path + ".qp", "workload QP '" + q->name + "' has no 'connect:' peer");
      d.hint = "add 'connect: <peer QP>' to QP '" + q->name + "'";
      return;
    }
    const Qp* peer = s_.qp(q->connect.name);
    if (!peer) return;
    if ((rdma || atomic) && !w.remote_mr) {
      auto& d = sink_.error("Q104", w.loc, path, std::string(op->scenario) + " needs 'remote_mr' (the peer's buffer)");
      d.hint = "add 'remote_mr: <MR on the peer's PD>'";
    }
    if (!w.local_mr) {
      auto& d = sink_.error("Q104", w.loc, path, "workload needs 'local_mr'");
      d.hint = "add 'local_mr: <MR on the QP's PD>'";
    }
    // The access the op needs on the responder (IBV_ACCESS bit, name).
    uint32_t bit = op->remote_access;
    const char* name = op->access_name;
    // Providers differ on the status of an access violation (rxe NAKs a QP without remote
    // access as an invalid request), so either expectation marks the violation as intended.
    bool expects_access_error = w.expect_status && (*w.expect_status == "IBV_WC_REM_ACCESS_ERR" ||
                                                    *w.expect_status == "IBV_WC_REM_INV_REQ_ERR");
    if (bit && !expects_access_error) {
      const auto* flags = any_value(*peer, "qp_access_flags");
      uint64_t granted = flags && flags->symbol == Symbol::None ? flags->number : 0;
      // rdma_cm grants a connected RC QP remote write, read and atomic (responder_resources 1), UC write.
      if (peer->cm.brings_up() && peer->cm.end_state() == spec::QpState::RTS) granted = peer->qp_type == spec::QpType::RC ? 0xE : 0x2;
      if (!(granted & bit)) {
        auto& d = sink_.error("Q507", w.op_loc, path + ".op",
                              op->scenario + std::string(" needs ") + name + " in the responder QP '" + peer->name + "' qp_access_flags");
        d.rule = "the responder checks qp_access_flags; without it the requester gets IBV_WC_REM_ACCESS_ERR";
        d.hint = "add " + std::string(name) + " to qps." + peer->name + ".states.INIT.qp_access_flags, or expect "
                 "status IBV_WC_REM_ACCESS_ERR";
        if (flags) d.related.push_back({flags->loc, "responder access flags"});
      }
      if (const auto* m = s_.mr(w.remote_mr.name); m && !(m->access & bit)) {
        auto& d = sink_.error("Q508", w.remote_mr.loc, path + ".remote_mr",
                              op->scenario + std::string(" needs ") + name + " in the access of remote MR '" + m->name + "'");
        d.rule = "the rkey's MR must grant the remote access (else IBV_WC_REM_ACCESS_ERR)";
        d.hint = "add " + std::string(name) + " to mrs." + m->name + ".access";
        d.related.push_back({m->access_loc, "MR access"});
      }
    }
    if (read || atomic) {
      const auto* init_depth = literal(*q, "max_rd_atomic");
      if (init_depth && init_depth->number == 0) {
        auto& d = sink_.error("Q507", init_depth->loc, init_depth->path,
                              std::string(op->scenario) + " needs max_rd_atomic >= 1 on the requester '" + q->name + "'");
        d.rule = "max_rd_atomic = outstanding RDMA reads/atomics the requester may issue";
      }
      const auto* dest_depth = literal(*peer, "max_dest_rd_atomic");
      if (dest_depth && dest_depth->number == 0) {
        auto& d = sink_.error("Q507", dest_depth->loc, dest_depth->path,
                              std::string(op->scenario) + " needs max_dest_rd_atomic >= 1 on the responder '" + peer->name + "'");
        d.rule = "max_dest_rd_atomic = RDMA reads/atomics the responder accepts in flight";
      }
    }
    if (atomic && w.offset % 8) {
      auto& d = sink_.error("Q510", w.offset_loc, path + ".offset",
                            "atomic operations need an 8-byte aligned address; offset " + std::to_string(w.offset) + " is not");
      d.rule = "IB spec 9.4.5: the atomic's remote virtual address must be 8-byte aligned";
      d.hint = "use a multiple of 8";
    }
    if (atomic && w.size != 8) {
      auto& d = sink_.error("Q510", w.loc, path + ".size", "atomic operations move exactly 8 bytes, not " +
                                                              std::to_string(w.size));
      d.hint = "set size: 8";
    }
    for (const auto* ref : {&w.local_mr, &w.remote_mr}) {
      const auto* m = s_.mr(ref->name);
      if (m && w.offset == 0 && w.size > m->size) {
        auto& d = sink_.error("Q510", ref->loc, path, "message size " + std::to_string(w.size) + " exceeds MR '" +
                                                          m->name + "' (" + std::to_string(m->size) + " bytes)");
        d.hint = "grow the MR or shrink the message";
      } else if (m && (w.offset > m->size || w.size > m->size - w.offset)) {
        auto& d = sink_.error("Q510", w.offset_loc, path + ".offset",
                              "offset " + std::to_string(w.offset) + " + size " + std::to_string(w.size) +
                                  " runs past the end of MR '" + m->name + "' (" + std::to_string(m->size) + " bytes)");
        d.hint = "lower the offset, shrink the message or grow the MR";
      }
    }
    if (w.offset && !w.script.empty()) {
      auto& d = sink_.error("Q101", w.offset_loc, path + ".offset", "'offset' is for op workloads; a script places its own bytes");
      d.hint = "pass it in the script's args:";
    }
    if (!op->remote && !w.local_mr) return;
  }

  const scenario::Scenario& s_;
  diag::DiagSink& sink_;
};

}  // namespace

void check_cross_qp(const scenario::Scenario& s, diag::DiagSink& sink) { CrossChecker(s, sink).run(); }

}  // namespace qpo::check
