// Memory windows (`mws:`): what a bind needs from its MR, QP and PD, what a workload through a
// window may touch, and whether the window is bound when the timeline reaches that workload.
// The rules follow IBTA's compliance statements as rxe (drivers/infiniband/sw/rxe/rxe_mw.c)
// enforces them: a bind error or a remote access error at run time is a diagnostic here.
#include <map>
#include <set>

#include "check/validate.h"
#include "spec/rules.h"
#include "util/ops.h"
#include "util/strings.h"

namespace qpo::check {

namespace {

using scenario::Mw;
using scenario::Scenario;

uint32_t access_bit(const char* name) {
  for (const auto& [n, v] : *spec::RuleTable::builtin().enum_values("access"))
    if (n == name) return static_cast<uint32_t>(v);
  return 0;
}

// "remote_write, remote_read": the short names of the bits in `mask`.
std::string access_words(uint32_t mask) {
  std::vector<std::string> out;
  for (const auto& [n, v] : *spec::RuleTable::builtin().enum_values("access"))
    if (v && (mask & v) == v) out.push_back(util::to_lower(n.substr(11)));
  return out.empty() ? "none" : util::join(out, ", ");
}

bool expects_access_error(const scenario::Workload& w) {
  return w.expect_status && (*w.expect_status == "IBV_WC_REM_ACCESS_ERR" || *w.expect_status == "IBV_WC_REM_INV_REQ_ERR");
}

class MwChecker {
 public:
  MwChecker(const Scenario& s, diag::DiagSink& sink) : s_(s), sink_(sink) {}

  void run() {
    for (const auto& w : s_.mws) window(w);
    for (const auto& w : s_.workloads) {
      through_window(w);
      send_with_invalidate(w);
    }
    timeline();
  }

 private:
  const uint32_t kLocalWrite = access_bit("IBV_ACCESS_LOCAL_WRITE");
  const uint32_t kRemoteWrite = access_bit("IBV_ACCESS_REMOTE_WRITE");
  const uint32_t kRemoteRead = access_bit("IBV_ACCESS_REMOTE_READ");
  const uint32_t kRemoteAtomic = access_bit("IBV_ACCESS_REMOTE_ATOMIC");
  const uint32_t kMwBind = access_bit("IBV_ACCESS_MW_BIND");
  const uint32_t kZeroBased = access_bit("IBV_ACCESS_ZERO_BASED");

  void window(const Mw& w) {
    std::string p = "mws." + w.name;
    const auto* m = s_.mr(w.mr.name);
    const auto* q = s_.qp(w.bind_qp.name);
    if (m && w.pd && m->pd && w.pd.name != m->pd.name) {
      auto& d = sink_.error("Q206", w.pd.loc, p + ".pd",
                            "memory window '" + w.name + "' is in PD '" + w.pd.name + "', its MR '" + m->name + "' in PD '" +
                                m->pd.name + "'");
      d.rule = "ibv_bind_mw(3): the MR and the window must belong to the same protection domain (else EPERM)";
      d.hint = "drop 'pd:' (the window then takes its MR's PD), or name '" + m->pd.name + "'";
    }
    if (m && !(m->access & kMwBind)) {
      auto& d = sink_.error("Q530", w.mr.loc, p + ".mr", "MR '" + m->name + "' does not grant mw_bind: no window can be bound to it");
      d.rule = "IBTA C10-73: binding needs IBV_ACCESS_MW_BIND on the MR (else IBV_WC_MW_BIND_ERR)";
      d.hint = "add mw_bind to mrs." + m->name + ".access";
      d.related.push_back({m->access_loc, "MR access"});
    }
    if (m && w.length == 0 && w.length_loc.given()) {
      auto& d = sink_.error("Q531", w.length_loc, p + ".length", "a window of 0 bytes grants no access");
      d.rule = "ibv_alloc_mw(3): a type 1 bind of length 0 unbinds the window; it is not a window to bind";
      d.hint = "leave length out (up to the MR's end), give the bytes the peer may reach, or unbind with an `invalidate:` step";
    } else if (m && (w.offset >= m->size || w.length == 0 || w.length > m->size - w.offset)) {
      auto& d = sink_.error("Q531", w.length_loc.given() ? w.length_loc : w.offset_loc, p,
                            "window bytes " + std::to_string(w.offset) + ".." + std::to_string(w.offset + w.length) +
                                " are not inside MR '" + m->name + "' (" + std::to_string(m->size) + " bytes)");
      d.rule = "IBTA C10-75: a window lies within its MR (else IBV_WC_MW_BIND_ERR)";
      d.hint = "lower offset or length, or grow the MR";
    }
    uint32_t allowed = kRemoteWrite | kRemoteRead | kRemoteAtomic | kZeroBased;
    if (w.access & ~allowed) {
      auto& d = sink_.error("Q532", w.access_loc, p + ".access",
                            "a window grants remote access only; " + access_words(w.access & ~allowed) + " is not a window flag");
      d.rule = "ibv_bind_mw(3): mw_access_flags are IBV_ACCESS_REMOTE_WRITE, _REMOTE_READ, _REMOTE_ATOMIC, _ZERO_BASED";
      d.hint = "keep remote_write, remote_read, remote_atomic (and zero_based)";
    }
    if (m && (w.access & (kRemoteWrite | kRemoteAtomic)) && !(m->access & kLocalWrite)) {
      auto& d = sink_.error("Q532", w.access_loc, p + ".access",
                            "a window granting remote_write or remote_atomic needs local_write on MR '" + m->name + "'");
      d.rule = "IBTA C10-74: a writable window needs a locally writable MR (else IBV_WC_MW_BIND_ERR)";
      d.hint = "add local_write to mrs." + m->name + ".access";
      d.related.push_back({m->access_loc, "MR access"});
    }
    if (w.type == 1 && (w.access & kZeroBased)) {
      auto& d = sink_.error("Q532", w.access_loc, p + ".access", "a type 1 window cannot be zero-based");
      d.rule = "IBTA o10-36.2.2: zero-based addressing is for type 2 windows";
      d.hint = "use type: 2, or drop zero_based";
    }
    if (!q || q->type < 0) return;
    if (q->qp_type != spec::QpType::RC && q->qp_type != spec::QpType::UC) {
      auto& d = sink_.error("Q534", w.bind_qp.loc, p + ".bind_qp",
                            "QP '" + q->name + "' is " + q->type_name + "; a window is bound on an RC or UC QP");
      d.rule = "a bind is a send queue work request of a connected QP (IBV_WR_BIND_MW)";
      d.hint = "name an RC or UC QP on PD '" + w.pd.name + "'";
    } else if (w.type == 2 && w.pd && q->pd && q->pd.name != w.pd.name) {
      auto& d = sink_.error("Q206", w.bind_qp.loc, p + ".bind_qp",
                            "type 2 window '" + w.name + "' is in PD '" + w.pd.name + "', its bind QP '" + q->name +
                                "' in PD '" + q->pd.name + "'");
      d.rule = "IBTA C10-72: a type 2 window is bound through a QP of its own PD (else IBV_WC_MW_BIND_ERR)";
      d.hint = "bind it on a QP of PD '" + w.pd.name + "'";
    }
  }

  // A workload whose remote_mr names a window reaches the MR through the window's rkey.
  void through_window(const scenario::Workload& w) {
    const Mw* mw = s_.mw(w.remote_mr.name);
    const auto* op = w.builtin_op();
    if (!mw) return;
    std::string p = "workloads." + w.name + ".remote_mr";
    if (!op) {
      auto& d = sink_.error("Q533", w.remote_mr.loc, p, "only op workloads reach a memory window, not scripts");
      d.hint = "use 'op: rdma_write' (or read, atomics), or name an MR";
      return;
    }
    if (expects_access_error(w)) return;  // the point of the workload
    const auto* q = s_.qp(w.qp.name);
    const auto* peer = q ? s_.qp(q->connect.name) : nullptr;
    if (peer && mw->pd && peer->pd && mw->pd.name != peer->pd.name) {
      auto& d = sink_.error("Q206", w.remote_mr.loc, p,
                            "window '" + mw->name + "' is in PD '" + mw->pd.name + "', but the peer QP '" + peer->name +
                                "' is in PD '" + peer->pd.name + "'");
      d.rule = "the rkey must belong to the responder QP's protection domain (else IBV_WC_REM_ACCESS_ERR)";
    }
    if (mw->type == 2 && peer && mw->bind_qp && peer->name != mw->bind_qp.name) {
      auto& d = sink_.error("Q207", w.remote_mr.loc, p,
                            "type 2 window '" + mw->name + "' is bound on QP '" + mw->bind_qp.name +
                                "', but this workload reaches it through '" + peer->name + "'");
      d.rule = "IBTA type 2B: a type 2 window answers only the QP it was bound on (else IBV_WC_REM_ACCESS_ERR)";
      d.hint = "bind it on '" + peer->name + "', or expect status IBV_WC_REM_ACCESS_ERR";
    }
    if (op->remote_access && !(mw->access & op->remote_access)) {
      auto& d = sink_.error("Q532", w.remote_mr.loc, p,
                            std::string(op->scenario) + " needs " + op->access_name + " in the access of window '" + mw->name + "'");
      d.rule = "the window's access decides what its rkey allows (else IBV_WC_REM_ACCESS_ERR)";
      d.hint = std::string("add ") + op->access_name + " to mws." + mw->name + ".access, or expect status IBV_WC_REM_ACCESS_ERR";
      d.related.push_back({mw->access_loc, "window access"});
    }
    uint64_t bytes = op->atomic ? 8 : w.size;
    if (w.offset > mw->length || bytes > mw->length - w.offset) {
      auto& d = sink_.error("Q533", w.offset_loc.given() ? w.offset_loc : w.remote_mr.loc, p,
                            "offset " + std::to_string(w.offset) + " + size " + std::to_string(bytes) +
                                " runs past the end of window '" + mw->name + "' (" + std::to_string(mw->length) + " bytes)");
      d.rule = "the responder checks every access against the window's range (else IBV_WC_REM_ACCESS_ERR)";
      d.hint = "stay inside the window, or expect status IBV_WC_REM_ACCESS_ERR to test exactly that";
    }
  }

  // `op: send_with_inv` with `invalidate: W`: a SEND whose responder invalidates W's rkey.
  void send_with_invalidate(const scenario::Workload& w) {
    std::string p = "workloads." + w.name;
    bool inv_op = w.script.empty() && w.op == util::Op::SendInv;
    if (!inv_op && !w.invalidate) return;
    if (!inv_op) {
      auto& d = sink_.error("Q536", w.invalidate.loc, p + ".invalidate",
                            "'invalidate:' belongs to op send_with_inv, not to " + (w.script.empty() ? "op " + std::string(w.op_spelling()) : "a script"));
      d.rule = "only IBV_WR_SEND_WITH_INV carries an rkey for the responder to invalidate (ibv_post_send(3): invalidate_rkey)";
      d.hint = "use 'op: send_with_inv', or drop 'invalidate:'";
      return;
    }
    if (!w.invalidate) {
      auto& d = sink_.error("Q536", w.op_loc, p + ".op", "send_with_inv needs 'invalidate: <memory window>'");
      d.rule = "IBV_WR_SEND_WITH_INV invalidates the rkey in invalidate_rkey: qpo takes it from the window named";
      d.hint = "add 'invalidate: W' naming a type 2 window on the receiving QP's side";
      return;
    }
    const Mw* mw = s_.mw(w.invalidate.name);
    if (!mw) {
      auto& d = sink_.error("Q201", w.invalidate.loc, p + ".invalidate", "no memory window named '" + w.invalidate.name + "'");
      std::vector<std::string> names;
      for (const auto& m : s_.mws) names.push_back(m.name);
      auto guess = util::did_you_mean(w.invalidate.name, names);
      d.hint = guess.empty() ? "declare it under 'mws:'" : "did you mean '" + guess + "'?";
      return;
    }
    if (mw->type != 2) {
      auto& d = sink_.error("Q537", w.invalidate.loc, p + ".invalidate",
                            "window '" + mw->name + "' is type " + std::to_string(mw->type) + "; a send with invalidate invalidates a type 2 window");
      d.rule = "IBTA o10-37.2.26: a type 1 window is not invalidated remotely (rxe: the responder fails the SEND)";
      d.hint = "make mws." + mw->name + " type: 2, or unbind it with an 'invalidate:' timeline step";
      d.related.push_back({mw->loc, "the window"});
    }
    const auto* q = s_.qp(w.qp.name);
    if (q && q->type >= 0 && q->qp_type != spec::QpType::RC && q->qp_type != spec::QpType::XRC_SEND) {
      auto& d = sink_.error("Q547", w.op_loc, p + ".op", q->type_name + " QPs cannot do send_with_inv");
      d.rule = "ibv_post_send(3): IBV_WR_SEND_WITH_INV is a reliable-connection operation (RC, XRC)";
      d.hint = "send from an RC QP";
    }
    const auto* peer = q ? s_.qp(q->connect.name) : nullptr;
    if (peer && mw->pd && peer->pd && mw->pd.name != peer->pd.name) {
      auto& d = sink_.error("Q538", w.invalidate.loc, p + ".invalidate",
                            "window '" + mw->name + "' is in PD '" + mw->pd.name + "', the receiving QP '" + peer->name +
                                "' in PD '" + peer->pd.name + "'");
      d.rule = "the responder invalidates an rkey of its own protection domain (else the SEND fails: IBV_WC_REM_INV_REQ_ERR / REM_OP_ERR)";
      d.hint = "name a window on the receiver's side (a PD '" + peer->pd.name + "' window), or send from its peer";
    }
    if (w.iterations != 1) {
      auto& d = sink_.error("Q548", w.iterations_loc.given() ? w.iterations_loc : w.op_loc, p + ".iterations",
                            "send_with_inv runs " + std::to_string(w.iterations) + " times; the window is invalid after the first");
      d.rule = "invalidating a window that is already invalid fails the SEND at the responder (rxe: rxe_invalidate_mw)";
      d.hint = "iterations: 1 (bind the window again for another)";
    }
  }

  // Follows each window through the timeline: bound by `bind:`, unbound by `invalidate:`
  // (or a send_with_inv workload naming it).
  void timeline() {
    std::map<std::string, std::string> unbound_by;  // window -> the step that left it unbound
    for (const auto& w : s_.mws) unbound_by[w.name] = "";
    for (const auto& step : s_.timeline) {
      using Kind = scenario::TimelineStep::Kind;
      if (step.kind == Kind::BindMw || step.kind == Kind::InvalidateMw) {
        for (const auto& ref : step.mws) {
          const Mw* mw = s_.mw(ref.name);
          if (!mw) continue;  // references.cpp
          bool bound = !unbound_by.count(mw->name);
          if (step.kind == Kind::BindMw && bound && mw->type == 2) {
            auto& d = sink_.error("Q535", ref.loc, step.path, "type 2 window '" + mw->name + "' is bound already");
            d.rule = "IBTA o10-37.2.30: a type 2 window is bound only from the free state (else IBV_WC_MW_BIND_ERR)";
            d.hint = "invalidate it first ('- invalidate: " + mw->name + "')";
          }
          if (step.kind == Kind::InvalidateMw && !bound) {
            auto& d = sink_.error("Q535", ref.loc, step.path, "window '" + mw->name + "' is not bound here: nothing to invalidate");
            d.rule = "IBV_WR_LOCAL_INV of a free window fails the work request";
            d.hint = "bind it first ('- bind: " + mw->name + "')";
          }
          if (step.kind == Kind::BindMw) unbound_by.erase(mw->name);
          else unbound_by[mw->name] = step.path;
        }
      }
      if (step.kind != Kind::Workloads) continue;
      for (const auto& ref : step.workloads) {
        const auto* w = s_.workload(ref.name);
        if (w && w->invalidate && w->op == util::Op::SendInv && s_.mw(w->invalidate.name)) {
          auto it = unbound_by.find(w->invalidate.name);
          if (it != unbound_by.end()) {
            auto& d = sink_.error("Q539", ref.loc.given() ? ref.loc : w->loc, step.path,
                                  "workload '" + w->name + "' invalidates window '" + it->first + "', which " +
                                      (it->second.empty() ? "is not bound yet" : it->second + " invalidated"));
            d.rule = "the responder fails a send with invalidate of a free window (rxe: rxe_invalidate_mw)";
            d.hint = "add '- bind: " + it->first + "' before it";
          }
          unbound_by[w->invalidate.name] = step.path;
        }
        if (!w || !s_.mw(w->remote_mr.name) || expects_access_error(*w)) continue;
        auto it = unbound_by.find(w->remote_mr.name);
        if (it == unbound_by.end()) continue;
        auto& d = sink_.error("Q535", ref.loc.given() ? ref.loc : w->loc, step.path,
                              "workload '" + w->name + "' goes through window '" + it->first + "', which " +
                                  (it->second.empty() ? "is not bound yet" : it->second + " invalidated"));
        d.rule = "an unbound window's rkey is refused by the responder (IBV_WC_REM_ACCESS_ERR)";
        d.hint = "add '- bind: " + it->first + "' before it, or expect status IBV_WC_REM_ACCESS_ERR";
      }
    }
  }

  const Scenario& s_;
  diag::DiagSink& sink_;
};

}  // namespace

void check_memory_windows(const scenario::Scenario& s, diag::DiagSink& sink) { MwChecker(s, sink).run(); }

}  // namespace qpo::check
