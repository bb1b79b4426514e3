// rdma_cm connections (`cm:` on a QP): what the CM does instead of `states:`, and how the two
// ends of a connection must agree. Runs first: it fills in `connect:` from `cm.peer` (so the
// reference, cross-QP and timeline checks see the pair) and drops a CM QP's `states:` after
// reporting them (the CM computes every attribute of RESET->INIT->RTR->RTS itself).
#include <arpa/inet.h>

#include <map>
#include <set>
#include <tuple>

#include "check/validate.h"
#include "cm/exchange_data.h"
#include "util/strings.h"

namespace qpo::check {

namespace {

using scenario::Qp;
using scenario::Scenario;

bool ip_literal(const std::string& s) {
  unsigned char buf[16];
  return inet_pton(AF_INET, s.c_str(), buf) == 1 || inet_pton(AF_INET6, s.c_str(), buf) == 1;
}

// What rdma_init_qp_attr sets for each bring-up transition (kernel cma.c cma_ib_init_qp_attr
// and ib_cm_init_qp_attr; a UD QP's RTR and RTS carry only the state and sq_psn, as librdmacm's
// own UD bring-up).
const std::vector<std::string>& cm_sets(const std::string& type, spec::QpState to) {
  static const std::map<std::pair<std::string, spec::QpState>, std::vector<std::string>> table{
      {{"RC", spec::QpState::INIT}, {"pkey_index", "port_num", "qp_access_flags"}},
      {{"RC", spec::QpState::RTR}, {"ah_attr", "path_mtu", "dest_qp_num", "rq_psn", "max_dest_rd_atomic", "min_rnr_timer"}},
      {{"RC", spec::QpState::RTS}, {"sq_psn", "timeout", "retry_cnt", "rnr_retry", "max_rd_atomic"}},
      {{"UC", spec::QpState::INIT}, {"pkey_index", "port_num", "qp_access_flags"}},
      {{"UC", spec::QpState::RTR}, {"ah_attr", "path_mtu", "dest_qp_num", "rq_psn"}},
      {{"UC", spec::QpState::RTS}, {"sq_psn"}},
      {{"UD", spec::QpState::INIT}, {"pkey_index", "port_num", "qkey"}},
      {{"UD", spec::QpState::RTS}, {"sq_psn"}},
  };
  static const std::vector<std::string> none;
  auto it = table.find({type, to});
  return it == table.end() ? none : it->second;
}

// The most private data each call carries (librdmacm, rdma_connect(3)/rdma_accept(3)/rdma_reject(3)):
// what is left of the IB CM message after the rdma_cm header. qpo sends the text and a NUL.
size_t private_data_limit(bool ud, const char* call) {
  std::string c = call;
  if (c == "rdma_connect") return ud ? 180 : 56;
  if (c == "rdma_accept") return ud ? 136 : 196;
  return ud ? 136 : 148;  // rdma_reject
}

class CmChecker {
 public:
  CmChecker(Scenario& s, diag::DiagSink& sink) : s_(s), sink_(sink) {}

  void run() {
    for (auto& q : s_.qps)
      if (q.cm.given) one(q);
      else if (q.connect) into_exchange_only(q);
    ports();
  }

 private:
  std::string path(const Qp& q, const std::string& key = "") const {
    return "qps." + q.name + ".cm" + (key.empty() ? "" : "." + key);
  }

  void one(Qp& q) {
    auto& cm = q.cm;
    if (q.qp_type != spec::QpType::RC && q.qp_type != spec::QpType::UC && q.qp_type != spec::QpType::UD) {
      if (q.type >= 0) {
        auto& d = sink_.error("Q540", cm.loc, path(q), q.type_name + " QP '" + q.name + "' cannot connect through rdma_cm");
        d.rule = "rdma_cm connects RC QPs (RDMA_PS_TCP) and UC QPs (RDMA_PS_IB ids of type UC) and resolves UD peers (RDMA_PS_UDP)";
        d.hint = "use type RC, UC or UD, or bring the QP up with states:";
      }
      return;
    }
    if (cm.exchange_only) exchange_only(q);
    else states_written(q);
    role_keys(q);
    if (!cm.exchange_only) private_data(q);
    if (!cm.peer) {
      if (!cm.active || cm.expect_event.empty()) {
        auto& d = sink_.error("Q541", cm.loc, path(q), "rdma_cm QP '" + q.name + "' needs 'peer'");
        d.rule = "a connection has a QP at each end; only an active side expecting a failure may have none";
        d.hint = "add 'peer: <the QP at the other end>'";
      }
      if (cm.active && cm.address.empty()) need_address(q, nullptr);
      return;
    }
    if (const auto* e = s_.external(cm.peer.name)) return external_peer(q, *e);
    const Qp* p = s_.qp(cm.peer.name);
    if (!p) {
      auto& d = sink_.error("Q209", cm.peer.loc, path(q, "peer"), "no QP named '" + cm.peer.name + "' (or external peer)");
      std::vector<std::string> names;
      for (const auto& o : s_.qps) names.push_back(o.name);
      auto guess = util::did_you_mean(cm.peer.name, names);
      if (!guess.empty()) d.hint = "did you mean '" + guess + "'?";
      return;
    }
    // `connect:` is the peer relation the rest of qpo follows (smoke pairs, workloads, AHs);
    // a UD QP sends to its peer only from the active side (the CM tells it the passive's QPN).
    bool sends = q.qp_type != spec::QpType::UD || cm.active;
    if (q.connect && q.connect.name != p->name) {
      auto& d = sink_.error("Q209", q.connect.loc, "qps." + q.name + ".connect",
                            "QP '" + q.name + "' connects to '" + q.connect.name + "' but its cm: peer is '" + p->name + "'");
      d.related.push_back({cm.peer.loc, "the cm: peer"});
      d.hint = "drop connect: (cm: peer sets it)";
    } else if (!q.connect && sends) {
      q.connect = cm.peer;
    }
    pair(q, *p);
    if (cm.active && cm.address.empty()) need_address(q, p);
  }

  // The peer is a tool outside the scenario (`externals:` with exchange rdma_cm): the CM carries
  // the exchange, so `connect:` names the external (check/externals.cpp checks the rest), and
  // the active side's address is the tool's: nothing in the scenario can supply it.
  void external_peer(Qp& q, const scenario::External& e) {
    auto& cm = q.cm;
    if (q.connect && q.connect.name != e.name) {
      auto& d = sink_.error("Q209", q.connect.loc, "qps." + q.name + ".connect",
                            "QP '" + q.name + "' connects to '" + q.connect.name + "' but its cm: peer is '" + e.name + "'");
      d.related.push_back({cm.peer.loc, "the cm: peer"});
      d.hint = "drop connect: (cm: peer sets it)";
    } else if (!q.connect) {
      q.connect = cm.peer;
    }
    if (cm.active && cm.address.empty()) need_address(q, nullptr);
  }

  // Each bring-up attribute the CM sets, and each `states:` entry, is an error: the CM computes
  // the values (from the resolved route and the peer's REQ/REP), so a written one would never
  // reach the device. The entries are dropped so later passes follow the CM's transitions.
  void states_written(Qp& q) {
    std::vector<scenario::Transition> kept;
    for (const auto& t : q.transitions) {
      if (!t.bring_up) {
        kept.push_back(t);
        continue;
      }
      bool named = false;
      const auto& sets = cm_sets(q.type_name, t.to);
      for (const auto& a : t.attrs) {
        bool set_by_cm = false;
        for (const auto& f : sets) set_by_cm |= f == a.field;
        if (!set_by_cm) continue;
        named = true;
        auto& d = sink_.error("Q312", a.key_loc, a.path,
                              a.field + " of QP '" + q.name + "' is set by rdma_cm (" + spec::state_name(t.to) +
                                  ": rdma_init_qp_attr), not by the scenario");
        d.rule = "rdma_cm computes " + q.type_name + " " + spec::state_name(t.to) + "'s " + util::join(sets, ", ") +
                 " from the resolved route and the peer's connection messages";
        d.hint = "drop " + a.field + "; `qpo plan` shows the CM's transitions";
      }
      if (!named) {
        auto& d = sink_.error("Q313", t.loc, t.path,
                              "QP '" + q.name + "' connects through rdma_cm: the CM makes its " +
                                  spec::state_name(t.to) + " transition, so states: has no place here");
        d.rule = "with cm:, RESET->INIT->RTR->RTS are rdma_init_qp_attr's (the CM flow), not the scenario's";
        d.hint = "drop states: (later transitions: after traffic stay allowed)";
      }
    }
    q.transitions = util::SharedList<scenario::Transition>(std::move(kept));
  }

  // exchange_only (perftest -z): the QPs keep their states: (what the CM would set is the
  // scenario's job); the connection only carries the exchange, which must fit its message.
  void exchange_only(const Qp& q) {
    const auto& cm = q.cm;
    auto refuse = [&](const util::SourceLoc& loc, const std::string& key, const std::string& msg, const std::string& hint) {
      auto& d = sink_.error("Q552", loc.given() ? loc : cm.loc, path(q, key), msg);
      d.rule = "with exchange_only the connection's private data is the pair's exchange (QPN, PSN, GID, MRs), on "
               "RDMA_PS_TCP ids with no QP: a connected pair that connects";
      d.hint = hint;
    };
    if (q.qp_type == spec::QpType::UD)
      refuse(cm.exchange_only_loc, "exchange_only", "UD QP '" + q.name + "' cannot take exchange_only",
             "drop exchange_only: a UD QP resolves its peer through rdma_cm itself (RDMA_PS_UDP)");
    if (!cm.private_data.empty())
      refuse(cm.loc, "private_data", "QP '" + q.name + "' has private_data: and exchange_only",
             "drop private_data: the exchange fills it");
    if (cm.reject) refuse(cm.reject_loc, "reject", "QP '" + q.name + "' has reject: and exchange_only", "drop reject:");
    if (!cm.expect_event.empty()) refuse(cm.expect_loc, "expect", "QP '" + q.name + "' has expect: and exchange_only", "drop expect:");
    if (q.qp_type == spec::QpType::UD) return;
    // The CM brings nothing up here: the scenario's states: must reach RTR (RTS to send).
    bool rtr = false;
    for (const auto& t : q.transitions) rtr |= t.bring_up && (t.to == spec::QpState::RTR || t.to == spec::QpState::RTS);
    if (!rtr) {
      auto& d = sink_.error("Q554", cm.exchange_only_loc.given() ? cm.exchange_only_loc : cm.loc, path(q, "exchange_only"),
                            "exchange_only QP '" + q.name + "' has no states: reaching RTR: it would stay at INIT");
      d.rule = "with exchange_only the CM only carries the exchange; the QP comes up by its own states:";
      d.hint = "add states: { INIT: {}, RTR: {}, RTS: {} }";
    }
    size_t bytes = cm::exchange_bytes(s_, q), limit = cm::exchange_limit(q);
    if (bytes <= limit) return;
    auto mrs = cm::carried_mrs(s_, q);
    const char* call = cm.active ? "rdma_connect" : "rdma_accept";
    auto& d = sink_.error("Q553", cm.exchange_only_loc.given() ? cm.exchange_only_loc : cm.loc, path(q, "exchange_only"),
                          "QP '" + q.name + "''s exchange is " + std::to_string(bytes) + " bytes (the QP " +
                              std::to_string(cm::kExchangeQpBytes) + ", its slots " + std::to_string(cm::kExchangeMrBytes) +
                              ", MRs " + (mrs.empty() ? std::string("none") : util::join(mrs, ", ")) + " " +
                              std::to_string(cm::kExchangeMrBytes) + " each): " + call + " carries " +
                              std::to_string(limit));
    d.rule = std::string(call) + " on RDMA_PS_TCP carries " + std::to_string(limit) +
             " bytes of private data; the active side's REQ has room for its QP and slots only, the passive side's REP "
             "for 7 MRs its peer's workloads aim at";
    d.hint = cm.active ? "make the side whose MRs the traffic aims at the passive one, or drop exchange_only"
                       : "fewer remote MRs in " + cm.peer.name + "'s workloads, or drop exchange_only";
  }

  // A QP without cm: connected to an exchange_only one: that QP's values travel in the CM's
  // private data to its cm: peer only, not through the hosts' exchange this QP reads.
  void into_exchange_only(const Qp& q) {
    const Qp* p = s_.qp(q.connect.name);
    if (!p || !p->cm.exchange_only || p->cm.peer.name == q.name) return;
    auto& d = sink_.error("Q555", q.connect.loc, "qps." + q.name + ".connect",
                          "QP '" + q.name + "' connects to '" + p->name + "', whose exchange goes to its cm: peer '" +
                              p->cm.peer.name + "' only");
    d.rule = "an exchange_only QP's QPN, PSN and GID travel in its rdma_cm connection, not in the hosts' exchange";
    d.hint = "connect to a QP without exchange_only, or drop exchange_only from '" + p->name + "'";
  }

  void role_keys(const Qp& q) {
    const auto& cm = q.cm;
    if (cm.active && cm.reject) {
      auto& d = sink_.error("Q546", cm.reject_loc, path(q, "reject"), "only the passive side rejects a connection");
      d.hint = "put reject: on the passive QP, and expect: {cm_event: REJECTED} here";
    }
    if (!cm.active && !cm.expect_event.empty()) {
      auto& d = sink_.error("Q546", cm.expect_loc, path(q, "expect"),
                            "only the active side waits for a connection's outcome; the passive side listens");
      d.hint = "put expect: on the active QP";
    }
  }

  void private_data(const Qp& q) {
    const auto& cm = q.cm;
    bool ud = q.qp_type == spec::QpType::UD;
    auto check = [&](const std::string& text, const char* call, const util::SourceLoc& loc, const std::string& p) {
      size_t limit = private_data_limit(ud, call);
      if (text.size() + 1 <= limit) return;
      auto& d = sink_.error("Q127", loc, p,
                            std::to_string(text.size()) + " bytes of private data (and a NUL) do not fit " + call + "'s " +
                                std::to_string(limit) + " bytes");
      d.rule = std::string(call) + " on " + (ud ? "RDMA_PS_UDP" : q.qp_type == spec::QpType::UC ? "RDMA_PS_IB" : "RDMA_PS_TCP") +
               ": what the IB CM message leaves after the rdma_cm header";
      d.hint = "shorten it to " + std::to_string(limit - 1) + " characters";
    };
    if (!cm.private_data.empty()) check(cm.private_data, cm.active ? "rdma_connect" : "rdma_accept", cm.loc, path(q, "private_data"));
    if (cm.reject) check(*cm.reject, "rdma_reject", cm.reject_loc, path(q, "reject"));
  }

  void need_address(Qp& q, const Qp* passive) {
    // The passive side's host address, when the scenario gives it as an IP.
    if (passive) {
      std::string host = s_.host_of_qp(*passive);
      const auto* h = s_.host(host);
      if (h && ip_literal(h->address)) {
        q.cm.address = h->address;
        return;
      }
    }
    auto& d = sink_.error("Q543", q.cm.loc, path(q),
                          "rdma_cm QP '" + q.name + "' needs 'address': the IP its connection resolves");
    d.rule = "the active side resolves the passive host's IP (rdma_resolve_addr); a host's address: is used when it is one";
    d.hint = "add 'address: 10.0.1.2' (the lab's guest b; fd00:1::2 over IPv6)";
  }

  void pair(const Qp& q, const Qp& p) {
    const auto& a = q.cm;
    std::string why;
    if (!p.cm.given) why = "'" + p.name + "' has no cm:";
    else if (p.cm.active == a.active) why = "both are " + std::string(a.active ? "active" : "passive");
    else if (p.cm.peer.name != q.name) why = "'" + p.name + "''s peer is '" + (p.cm.peer ? p.cm.peer.name : "(none)") + "'";
    else if (p.qp_type != q.qp_type) why = "'" + p.name + "' is " + p.type_name + ", '" + q.name + "' " + q.type_name;
    else if (p.cm.port != a.port) why = "ports " + std::to_string(a.port) + " and " + std::to_string(p.cm.port) + " differ";
    else if (p.cm.exchange_only != a.exchange_only)
      why = "only '" + (a.exchange_only ? q.name : p.name) + "' says exchange_only";
    if (!why.empty()) {
      auto& d = sink_.error("Q542", a.peer.loc, path(q, "peer"), "rdma_cm QPs '" + q.name + "' and '" + p.name + "' do not make a connection: " + why);
      d.rule = "one active and one passive QP of one type, each naming the other, on one port, both exchange_only or neither";
      if (p.cm.given) d.related.push_back({p.cm.loc, "the other end"});
      return;
    }
    if (!a.active) return;  // the pair is judged once, from the active side
    bool rejects = p.cm.reject.has_value();
    bool expects_reject = a.expect_event == "REJECTED";
    if (rejects != expects_reject) {
      auto& d = sink_.error("Q544", rejects ? p.cm.reject_loc : a.expect_loc, rejects ? path(p, "reject") : path(q, "expect"),
                            rejects ? "'" + p.name + "' rejects the connection, but '" + q.name + "' does not expect cm_event: REJECTED"
                                    : "'" + q.name + "' expects REJECTED, but '" + p.name + "' accepts");
      d.rule = "an expected outcome must be the one the scenario makes happen";
      d.hint = rejects ? "add expect: {cm_event: REJECTED, reason: consumer defined} to '" + q.name + "'"
                       : "add reject: \"...\" to '" + p.name + "'";
    } else if (!a.expect_event.empty() && !expects_reject) {
      auto& d = sink_.error("Q544", a.expect_loc, path(q, "expect"),
                            "'" + q.name + "' expects " + a.expect_event + ", but its peer '" + p.name + "' accepts");
      d.rule = "an expected outcome must be the one the scenario makes happen";
      d.hint = "drop peer: to try an address or port nobody answers";
    }
    if (rejects && a.expect_private_data && *a.expect_private_data != *p.cm.reject) {
      auto& d = sink_.error("Q544", a.expect_loc, path(q, "expect.private_data"),
                            "'" + q.name + "' expects private data '" + *a.expect_private_data + "', but '" + p.name +
                                "' rejects with '" + *p.cm.reject + "'");
      d.related.push_back({p.cm.reject_loc, "the reject"});
    }
    if (rejects && a.expect_reason && *a.expect_reason != "consumer defined") {
      auto& d = sink_.error("Q544", a.expect_loc, path(q, "expect.reason"),
                            "a peer's rdma_reject arrives with reason 'consumer defined' (IB CM reason 28), not '" +
                                *a.expect_reason + "'");
      d.hint = "write reason: consumer defined";
    }
  }

  // Two listeners on one host, port and port space: the second rdma_bind_addr fails
  // (EADDRINUSE). Each port space (TCP, UDP, IB) numbers its ports on its own.
  void ports() {
    std::map<std::tuple<std::string, uint32_t, std::string>, const Qp*> seen;
    for (const auto& q : s_.qps) {
      if (!q.cm.given || q.cm.active) continue;
      auto [it, fresh] = seen.emplace(std::make_tuple(s_.host_of_qp(q), q.cm.port, scenario::cm_port_space(q)), &q);
      if (fresh) continue;
      auto& d = sink_.error("Q545", q.cm.port_loc.given() ? q.cm.port_loc : q.cm.loc, path(q, "port"),
                            "port " + std::to_string(q.cm.port) + " of " + std::get<2>(it->first) +
                                " is listened on twice on host '" + std::get<0>(it->first) + "'");
      d.related.push_back({it->second->cm.loc, "the first listener"});
      d.rule = "one rdma_cm listener per host, port and port space (rdma_bind_addr: EADDRINUSE)";
      d.hint = "give each passive QP of a host its own port";
    }
  }

  Scenario& s_;
  diag::DiagSink& sink_;
};

}  // namespace

void check_cm(Scenario& s, diag::DiagSink& sink) { CmChecker(s, sink).run(); }

}  // namespace qpo::check
