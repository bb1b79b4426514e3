// Multicast groups (`mcast_groups:`) and the workloads that send to them (`mcast:`): members
// are UD QPs that accept the group's qkey, a group send is a UD SEND from a QP outside the
// group. Codes: Q201 (names), Q220 (not UD), Q221 (qkey), Q222 (a member twice), Q550 (what a
// group workload may be), Q551 (sender inside its group), Q620 (more messages than receives).
#include <set>

#include "check/validate.h"
#include "util/ops.h"
#include "util/strings.h"

namespace qpo::check {

namespace {

using scenario::McastGroup;
using scenario::Qp;
using scenario::Scenario;

constexpr uint32_t kDefaultQkey = 0x11111111;

// The qkey a UD QP's bring-up sets (the last literal one), and where; the default otherwise.
std::pair<uint32_t, const scenario::Attr*> qkey_of(const Qp& q) {
  const scenario::Attr* found = nullptr;
  for (const auto& t : q.transitions)
    if (const auto* a = t.attr("qkey"); a && t.bring_up && a->symbol == scenario::Symbol::None) found = a;
  return {found ? static_cast<uint32_t>(found->number) : kDefaultQkey, found};
}

class McastChecker {
 public:
  McastChecker(const Scenario& s, diag::DiagSink& sink) : s_(s), sink_(sink) {}

  void run() {
    for (const auto& g : s_.mcast_groups) group(g);
    for (const auto& w : s_.workloads)
      if (w.mcast) workload(w);
  }

 private:
  void group(const McastGroup& g) {
    std::string path = "mcast_groups." + g.name + ".members";
    std::set<std::string> seen;
    for (const auto& m : g.members) {
      const Qp* q = s_.qp(m.name);
      if (!q) {
        unknown(m, path, "QP");
        continue;
      }
      if (!seen.insert(m.name).second) {
        auto& d = sink_.error("Q222", m.loc, path, "QP '" + m.name + "' is listed twice in multicast group '" + g.name + "'");
        d.rule = "a QP is attached to a group once (ibv_attach_mcast of an attached QP is refused or ignored)";
        d.hint = "remove the second '" + m.name + "'";
        continue;
      }
      if (q->qp_type != spec::QpType::UD) {
        auto& d = sink_.error("Q220", m.loc, path, "multicast group member '" + q->name + "' is a " + q->type_name + " QP");
        d.rule = "ibv_attach_mcast(3): only UD QPs join multicast groups";
        d.related.push_back({q->type_loc, "its type"});
        d.hint = "make '" + q->name + "' a UD QP, or leave it out of the group";
        continue;
      }
      auto [qkey, at] = qkey_of(*q);
      if (qkey != g.qkey) {
        auto& d = sink_.error("Q221", at ? at->loc : m.loc, at ? at->path : path,
                              "member '" + q->name + "' has qkey " + util::hex(qkey) + ", multicast group '" + g.name +
                                  "' sends with qkey " + util::hex(g.qkey));
        d.rule = "a UD QP drops every datagram whose qkey is not its own: this member would receive nothing";
        d.related.push_back({g.qkey_loc, "the group's qkey"});
        d.hint = "give the group and its members one qkey";
      }
    }
  }

  // `op: recv`: a member counts the datagrams a sender outside the scenario sends to the group
  // (mckey -s, a DUT). It posts nothing, so nothing of a send may be given.
  void receive_only(const scenario::Workload& w, const McastGroup& g) {
    std::string path = "workloads." + w.name;
    const Qp* q = s_.qp(w.qp.name);
    if (!q) return;
    bool member = false;
    for (const auto& m : g.members) member |= m.name == q->name;
    if (!member) {
      auto& d = sink_.error("Q556", w.qp.loc, path + ".qp",
                            "'" + q->name + "' expects datagrams on multicast group '" + g.name + "' but is not a member");
      d.rule = "op recv counts what the group's members receive: the QP must join the group";
      d.hint = "add " + q->name + " to mcast_groups." + g.name + ".members";
      return;
    }
    auto refuse = [&](const util::SourceLoc& at, const char* key) {
      auto& d = sink_.error("Q556", at.given() ? at : w.loc, path + "." + key,
                            std::string("'") + key + "' on workload '" + w.name + "', which only receives (op recv)");
      d.rule = "op recv posts nothing: it counts the datagrams a sender outside the scenario sends to the group";
      d.hint = std::string("remove ") + key;
    };
    if (w.remote_mr) refuse(w.remote_mr.loc, "remote_mr");
    if (w.local_mr) refuse(w.local_mr.loc, "local_mr");
    if (w.offset_loc.given()) refuse(w.offset_loc, "offset");
    if (w.expect_status) refuse(w.expect_loc, "expect");
    if (w.invalidate) refuse(w.invalidate.loc, "invalidate");
    if (w.workers_loc.given()) refuse(w.workers_loc, "workers");
    if (q->qp_type == spec::QpType::UD && !q->srq && w.iterations > q->cap.max_recv_wr) {
      auto& d = sink_.warning("Q620", w.iterations_loc.given() ? w.iterations_loc : w.loc, path + ".iterations",
                              std::to_string(w.iterations) + " datagrams expected on multicast group '" + g.name +
                                  "', but '" + q->name + "' keeps " + std::to_string(q->cap.max_recv_wr) + " receives posted");
      d.rule = "a sender outside the scenario does not wait: a datagram that finds no receive posted is dropped";
      d.hint = "raise qps." + q->name + ".cap.max_recv_wr to " + std::to_string(w.iterations);
    }
  }

  void workload(const scenario::Workload& w) {
    std::string path = "workloads." + w.name;
    const McastGroup* g = s_.mcast_group(w.mcast.name);
    if (!g) {
      unknown(w.mcast, path + ".mcast", "multicast group");
      return;
    }
    if (!w.script.empty()) {
      auto& d = sink_.error("Q550", w.mcast.loc, path + ".mcast", "'mcast:' on a script workload");
      d.rule = "a group send is an op workload: the run checks that every member received every message";
      d.hint = "use 'op: send' instead of 'script:'";
      return;
    }
    const util::OpInfo* op = w.builtin_op();  // a script returned above
    if (op && op->op == util::Op::Recv) return receive_only(w, *g);
    if (op && op->op != util::Op::Send && op->op != util::Op::SendImm) {
      auto& d = sink_.error("Q550", w.op_loc, path + ".op", "a multicast group receives sends only, not " + std::string(op->scenario));
      d.rule = "multicast is a UD service: SEND and SEND with immediate";
      d.hint = "use 'op: send' or 'op: send_with_imm'";
    }
    if (w.remote_mr) {
      auto& d = sink_.error("Q550", w.remote_mr.loc, path + ".remote_mr", "a multicast send has no remote MR");
      d.hint = "remove 'remote_mr': each member receives into its own receive queue";
    }
    if (w.expect_status) {
      auto& d = sink_.error("Q550", w.expect_loc, path + ".expect", "a multicast send cannot expect a completion error");
      d.rule = "UD sends complete when they leave the sender; what members receive is checked instead";
    }
    const Qp* q = s_.qp(w.qp.name);
    if (!q) return;
    if (q->qp_type != spec::QpType::UD) {
      auto& d = sink_.error("Q220", w.qp.loc, path + ".qp", "multicast send from '" + q->name + "', a " + q->type_name + " QP");
      d.rule = "only UD QPs send to a multicast GID (remote_qpn 0xffffff)";
      d.related.push_back({q->type_loc, "its type"});
      return;
    }
    for (const auto& m : g->members)
      if (m.name == q->name) {
        auto& d = sink_.error("Q551", w.qp.loc, path + ".qp",
                              "'" + q->name + "' sends to multicast group '" + g->name + "', which it is a member of");
        d.rule = "whether a member receives its own multicast is the device's choice (rxe loops it back; others block it)";
        d.related.push_back({m.loc, "member here"});
        d.hint = "send from a UD QP outside the group";
        break;
      }
    for (const auto& m : g->members) {
      const Qp* r = s_.qp(m.name);
      if (!r || r->qp_type != spec::QpType::UD || r->srq) continue;
      if (w.iterations > r->cap.max_recv_wr) {
        auto& d = sink_.warning("Q620", w.iterations_loc.given() ? w.iterations_loc : w.loc, path + ".iterations",
                                std::to_string(w.iterations) + " messages to multicast group '" + g->name +
                                    "', but member '" + r->name + "' keeps " + std::to_string(r->cap.max_recv_wr) +
                                    " receives posted");
        d.rule = "a UD datagram that finds no receive posted is dropped; a member that falls behind loses messages";
        d.hint = "raise qps." + r->name + ".cap.max_recv_wr or lower iterations";
      }
    }
  }

  void unknown(const scenario::Ref& ref, const std::string& path, const std::string& kind) {
    auto& d = sink_.error("Q201", ref.loc, path, "no " + kind + " named '" + ref.name + "'");
    std::vector<std::string> names;
    if (kind == "QP")
      for (const auto& q : s_.qps) names.push_back(q.name);
    else
      for (const auto& g : s_.mcast_groups) names.push_back(g.name);
    auto guess = util::did_you_mean(ref.name, names);
    if (!guess.empty()) d.hint = "did you mean '" + guess + "'?";
  }

  const Scenario& s_;
  diag::DiagSink& sink_;
};

}  // namespace

void check_multicast(const scenario::Scenario& s, diag::DiagSink& sink) { McastChecker(s, sink).run(); }

}  // namespace qpo::check
