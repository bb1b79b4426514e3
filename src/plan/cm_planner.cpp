#include "plan/cm_planner.h"

#include <set>
#include <stdexcept>
#include <string_view>
#include <unordered_map>

#include "cm/exchange_data.h"
#include "plan/arg_lists.h"
#include "plan/timeline_planner.h"
#include "scenario/script_qps.h"
#include "util/cm_event_names.h"

namespace qpo::plan {

namespace {

using scenario::Qp;
using scenario::Scenario;

bool has_cm(const Scenario& s) {
  for (const auto& q : s.qps)
    if (q.cm.given && q.type >= 0) return true;
  return false;
}

// A UC QP's id is of type UC (rdma_create_ep); an exchange_only id has no QP, so it is an RC
// one whatever the QP's type.
bool uc(const Qp& q) { return q.qp_type == spec::QpType::UC && !q.cm.exchange_only; }
std::string ps_of(const Qp& q) { return scenario::cm_port_space(q); }

// What an exchange_only side's private data holds (cm/exchange_data.h).
std::string exchange_text(const Scenario& s, const Qp& q) {
  std::string out = q.name + "'s qp_num, sq_psn, lid, gid, active_mtu, port, slots (" +
                    std::to_string(cm::kExchangeQpBytes + cm::kExchangeMrBytes) + " bytes)";
  for (const auto& m : cm::carried_mrs(s, q)) out += ", MR " + m + " addr, length, rkey (" + std::to_string(cm::kExchangeMrBytes) + ")";
  return out;
}
// The wildcard of an address's family (cm/cm.h wildcard_of; the planner does not link librdmacm).
std::string wildcard_of(const std::string& ip) { return ip.find(':') != std::string::npos ? "::" : "0.0.0.0"; }

// IPv6 literals in brackets: [fd00:1::2]:7471.
// How to start an rdmacm-utils tool for this end (`client`: the tool dials qpo), with the size
// and count of the QP's workload `w` (null: none): udaddy has no port option (its -p is the
// port space; its port is 7174); rping says its role (-s serves, -c -a ADDRESS dials), -S, -C.
std::string tool_command(const scenario::External& x, uint32_t port, bool client, const scenario::Workload* w) {
  std::string p = " -p " + std::to_string(port);
  std::string size = w ? " -S " + std::to_string(w->size) : "", count = w ? " -C " + std::to_string(w->iterations) : "";
  if (x.exchange == scenario::External::Exchange::Perftest) {  // -R: the test QP's connection, -p the exchange's too
    std::string tool = !x.tool.empty()                              ? x.tool
                       : w && w->op == util::Op::Read               ? std::string("ib_read_bw")
                       : w && w->op == util::Op::Send               ? std::string("ib_send_bw")
                                                                    : std::string("ib_write_bw");
    std::string options = " -d DEVICE -x GID_INDEX -R" + (w ? " -s " + std::to_string(w->size) + " -n " + std::to_string(w->iterations) : "") + p;
    return tool + options + (client ? " QPO_ADDRESS" : "");
  }
  if (x.tool == "rping") return client ? "rping -c -a QPO_ADDRESS" + p + size + count + " -V" : "rping -s" + p + size;
  if (x.tool == "udaddy") return client ? "udaddy -s QPO_ADDRESS" + size + count : "udaddy" + size + count;
  if (x.tool == "ucmatose") return (client ? "ucmatose -s QPO_ADDRESS" : "ucmatose") + p + size + count;
  return x.tool + (client ? " -s QPO_ADDRESS" : "") + p;
}

std::string endpoint(const std::string& ip, uint32_t port) {
  return (ip.find(':') != std::string::npos ? "[" + ip + "]" : ip) + ":" + std::to_string(port);
}

class CmPlanner {
 public:
  CmPlanner(const Scenario& s, Plan& p, const scenario::BringupReceives* receives = nullptr)
      : s_(s), p_(p), receives_(receives) {
    args_.set_modifies(&p.modifies);
    for (size_t i = 0; i < p.cm_ends.size(); ++i) end_index_.emplace(p.cm_ends[i].qp, static_cast<int>(i));
  }

  void connect() {
    if (!has_cm(s_)) return;
    lower_ends();
    int k = stage("cm listen");
    for (const auto& h : p_.hosts) {
      bool any = false;
      for (const auto& q : s_.qps) any |= q.cm.given && q.type >= 0 && s_.host_of_qp(q) == h.host;
      if (any) add(h.host, StepKind::CmChannel, "rdma_create_event_channel", channel_name(h.host), k);
    }
    for (const auto& q : s_.qps) {
      if (!q.cm.given || q.type < 0) continue;
      std::string host = s_.host_of_qp(q);
      std::string bound = endpoint(q.cm.address.empty() ? "::" : q.cm.address, q.cm.port);
      std::string every = q.cm.address.empty() ? "every address, IPv4 too" : "";
      auto& id = add(host, StepKind::CmCreateId, uc(q) ? Text("rdma_create_ep + rdma_migrate_id") : Text("rdma_create_id"),
                     q.cm.active ? q.name : listener(q), k, !q.cm.active);
      if (uc(q)) {
        // rdma_create_id would make an RC id (cm/cm.h Id::endpoint).
        id.args.push_back(arg("ai_flags", "RAI_PASSIVE", "creates the id and binds it, no resolve"));
        id.args.push_back(arg("ai_port_space", ps_of(q)));
        id.args.push_back(arg("ai_qp_type", "IBV_QPT_UC", "the id's type: the REQ and the CM's attributes are UC ones"));
        if (q.cm.active) id.args.push_back(arg("ai_src_addr", endpoint(wildcard_of(q.cm.address), 0), "any port"));
        else id.args.push_back(arg("ai_src_addr", bound, every));
        id.args.push_back(arg("migrate to", channel_name(host), "its events come on the host's channel"));
      } else {
        id.args.push_back(arg("channel", channel_name(host)));
        id.args.push_back(arg("port_space", ps_of(q)));
      }
      if (q.cm.active) continue;
      auto& l = add(host, StepKind::CmListen, uc(q) ? Text("rdma_listen") : Text("rdma_bind_addr + rdma_listen"), listener(q), k,
                    true);
      l.args.push_back(arg("address", bound, uc(q) ? "bound by rdma_create_ep" : every));
      l.args.push_back(arg("backlog", "1"));
    }
    k = stage("cm connect");
    for (const auto& q : s_.qps) {
      if (!q.cm.given || q.type < 0) continue;
      if (q.cm.exchange_only) exchange_connect(q, k);
      else if (q.cm.active) active(q, k);
      else passive(q, k);
    }
  }

  void disconnect() {
    int k = -1;
    for (const auto& q : s_.qps) {
      if (!q.cm.given || q.type < 0 || q.qp_type == spec::QpType::UD || q.cm.end_state() != spec::QpState::RTS) continue;
      if (k < 0) k = stage("cm disconnect");
      std::string host = s_.host_of_qp(q);
      auto& st = add(host, StepKind::CmDisconnect, "rdma_disconnect", q.name, k);
      const auto* x = q.cm.peer ? s_.external(q.cm.peer.name) : nullptr;
      const auto* tool = x ? scenario::External::cm_tool(x->tool) : nullptr;
      bool external = x && !(tool && tool->client_disconnects);
      if (external && !q.cm.active)
        st.args.push_back(arg("first", "qpo's DREQ", "an external tool's client may wait for the server's (ucmatose's does)"));
      else if (!q.cm.active)
        st.args.push_back(arg("after", "the peer's DREQ", "answers it with a DREP"));
      describe_wait(st, "RDMA_CM_EVENT_DISCONNECTED");
    }
  }

  void teardown(HostPlan& hp) {
    if (!has_cm(s_)) return;
    bool any = false;
    for (auto it = s_.qps.rbegin(); it != s_.qps.rend(); ++it) {
      const auto& q = *it;
      if (!q.cm.given || q.type < 0 || s_.host_of_qp(q) != hp.host) continue;
      any = true;
      add_teardown(hp, "rdma_destroy_id", q.name);  // the passive side's: the request's id
      if (!q.cm.active) add_teardown(hp, "rdma_destroy_id", listener(q));
    }
    if (any) add_teardown(hp, "rdma_destroy_event_channel", channel_name(hp.host));
  }

 private:
  static std::string channel_name(const std::string& host) { return "qpo.cm." + host; }
  // The QP's first workload (an external tool's conversation has one), or null.
  const scenario::Workload* workload_on(const Qp& q) const {
    for (const auto& w : s_.workloads)
      if (w.qp.name == q.name) return &w;
    return nullptr;
  }
  static constexpr std::string_view kListener = ".listener";
  static std::string listener(const Qp& q) { return q.name + std::string(kListener); }

  int stage(std::string name) {
    p_.stages.push_back(std::move(name));
    return static_cast<int>(p_.stages.size()) - 1;
  }

  HostPlan* host(const std::string& name) {
    for (auto& h : p_.hosts)
      if (h.host == name) return &h;
    return nullptr;
  }

  // `listener`: the step is about the listener id of the QP `object` names with kListener
  // appended (said by the caller: a QP may itself be called "x.listener").
  Step& add(const std::string& host_name, StepKind kind, Text verb, std::string object, int k, bool listener = false) {
    HostPlan* h = host(host_name);
    auto& steps = h ? h->steps : nowhere_.steps;
    // Built in place, in the list reserved for the whole plan.
    Step& st = steps.emplace_back();
    st.index = static_cast<int>(steps.size());
    st.kind = kind;
    st.phase = kind == StepKind::CmDisconnect ? Phase::Transitions : Phase::BringUp;
    st.verb = verb;
    st.stage = k;
    // Every step about a QP's connection (its id, its listener) carries the QP's lowered end.
    if (kind != StepKind::CmChannel) {
      auto it = end_index_.find(listener ? object.substr(0, object.size() - kListener.size()) : object);
      if (it != end_index_.end()) {
        st.edit_extra().cm_end = it->second;
        st.edit_extra().cm_listener = listener;
      }
    }
    st.object = std::move(object);
    return st;
  }

  // Plan::cm_ends: each CM QP's `cm:` with what exec needs of its peer, resolved here.
  void lower_ends() {
    for (const auto& q : s_.qps) {
      if (!q.cm.given || q.type < 0) continue;
      const auto& cm = q.cm;
      CmEnd e;
      e.qp = q.name;
      e.host = s_.host_of_qp(q);
      e.type = q.qp_type;
      e.active = cm.active;
      e.exchange_only = cm.exchange_only;
      e.address = cm.address;
      e.port = cm.port;
      e.private_data = cm.private_data;
      e.reject = cm.reject;
      e.expect_timeout = cm.expect_event == "timeout";
      if (const auto* ev = util::cm_expectable_event(cm.expect_event)) e.expect_event = ev->value;
      e.expect_reason = cm.expect_reason;
      e.expect_private_data = cm.expect_private_data;
      e.within_ms = cm.within_ms;
      if (q.connect) e.connect = q.connect.name;
      e.link_host = e.host;
      if (const Qp* p = cm.peer ? s_.qp(cm.peer.name) : nullptr) {
        e.peer = p->name;
        e.peer_host = s_.host_of_qp(*p);
        e.peer_type = p->type_name;
        e.peer_private_data = p->cm.private_data;
        if (cm.exchange_only) {
          e.peer_exchange_bytes = cm::exchange_bytes(s_, *p);
          e.peer_carried_mrs = cm::carried_mrs(s_, *p);
        }
        e.link_host = e.peer_host;
      } else if (const auto* x = cm.peer ? s_.external(cm.peer.name) : nullptr) {
        e.peer = x->name;
        e.external = true;
        e.peer_from = x->from;
        if (const auto* t = scenario::External::cm_tool(x->tool)) e.external_client_disconnects = t->client_disconnects;
        if (x->rdma_cm && !cm.active)
          for (size_t i = 0; i < p_.externals.size(); ++i)
            if (p_.externals[i].name == x->name) e.perftest_sync = static_cast<int>(i);
      } else if (!cm.peer) {
        // An active side with no peer (an expected failure) still means the link between the
        // hosts: its address is on that link.
        for (const auto& h : s_.hosts)
          if (h.name != e.host) {
            e.link_host = h.name;
            break;
          }
      }
      // Only an exchange_only connection carries MRs (a scan of the workloads per QP).
      if (cm.exchange_only) e.carried_mrs = cm::carried_mrs(s_, q);
      for (const auto& m : e.carried_mrs)
        for (const auto& w : s_.workloads)
          if (w.remote_mr.name == m && w.qp.name != cm.peer.name) {
            e.carried_and_published.push_back(m);
            break;
          }
      e.carried_keys = carried_keys(e.carried_mrs);
      e.peer_carried_keys = carried_keys(e.peer_carried_mrs);
      e.carried_and_published_keys = carried_keys(e.carried_and_published);
      e.qp_id = p_.qp_id(e.qp);
      if (!e.connect.empty()) e.connect_id = p_.peer_id(e.connect);
      if (!e.peer.empty()) e.peer_id = p_.peer_id(e.peer);
      end_index_.emplace(e.qp, static_cast<int>(p_.cm_ends.size()));
      p_.cm_ends.push_back(std::move(e));
    }
  }

  void add_teardown(HostPlan& hp, Text verb, std::string object) {
    // Built in place, in the list reserved for the whole plan.
    Step& st = hp.steps.emplace_back();
    st.index = static_cast<int>(hp.steps.size());
    st.kind = StepKind::Destroy;
    st.phase = Phase::Teardown;
    st.verb = verb;
    st.object = std::move(object);
  }

  static void describe_wait(Step& st, const std::string& event) {
    st.edit_extra().event = event;
    st.args.push_back(arg("waits for", event, "at most the phase timeout"));
  }

  // The step an expected event ends: the active flow stops there, the step passes when it came.
  static void expect(Step& st, const Qp& q) {
    const auto& cm = q.cm;
    st.expect = cm.expect_event == "timeout" ? Text("timeout") : Text::intern(cm_event_name(cm.expect_event));
    std::string what = st.expect;
    if (cm.expect_reason) what += ", reason '" + *cm.expect_reason + "'";
    if (cm.expect_private_data) what += ", private data '" + *cm.expect_private_data + "'";
    st.args.push_back(arg("expected outcome", what,
                          cm.within_ms ? "within " + std::to_string(cm.within_ms) + " ms" : "within the phase timeout"));
  }

  void modify(const Qp& q, spec::QpState from_state, spec::QpState to_state, int k, const char* note = "") {
    auto& st = add(s_.host_of_qp(q), StepKind::CmModify, "ibv_modify_qp", q.name, k);
    Text from = Text::of_static(spec::state_name(from_state)), to = Text::of_static(spec::state_name(to_state));
    st.from_state = from;
    st.to_state = to;
    st.target = to_state;
    st.args.push_back(arg("transition", std::string(from) + "->" + to));
    st.args.push_back(arg("qp_state", std::string("IBV_QPS_") + to));
    st.args.push_back(arg("attributes", "rdma_init_qp_attr", *note ? note : "the CM's values and attr_mask", true));
  }

  void receives(const Qp& q, int k) {
    if (q.srq || q.cap.max_recv_wr == 0) return;
    auto& st = add(s_.host_of_qp(q), StepKind::PostRecv, "ibv_post_recv", q.name, k);
    st.count = receives_->of_qp(q);
    st.args.push_back(arg("wr_count", std::to_string(st.count), "before RTR"));
  }

  // exchange_only: the connection carries the exchange (the REQ the active side's values, the
  // REP the passive side's), then each QP's own RTR and RTS run with the peer's values.
  void exchange_connect(const Qp& q, int k) {
    std::string host = s_.host_of_qp(q);
    std::string bytes = std::to_string(cm::exchange_bytes(s_, q)) + " of " + std::to_string(cm::exchange_limit(q)) + " bytes";
    std::string peer = q.cm.peer ? q.cm.peer.name : "the peer";
    Arg got = arg("peer values", peer + "'s exchange", "into the directory: what 'peer' resolves to at RTR", true);
    if (q.cm.active) {
      auto& ra = add(host, StepKind::CmResolveAddr, "rdma_resolve_addr", q.name, k);
      ra.args.push_back(arg("dst", endpoint(q.cm.address, q.cm.port)));
      describe_wait(ra, "RDMA_CM_EVENT_ADDR_RESOLVED");
      describe_wait(add(host, StepKind::CmResolveRoute, "rdma_resolve_route", q.name, k), "RDMA_CM_EVENT_ROUTE_RESOLVED");
      auto& c = add(host, StepKind::CmConnect, "rdma_connect", q.name, k);
      c.args.push_back(arg("qp_num", q.name + "'s", "carried in the REQ; no QP on the id, the CM never touches it", true));
      c.args.push_back(arg("private_data", exchange_text(s_, q), bytes, true));
      describe_wait(c, "RDMA_CM_EVENT_CONNECT_RESPONSE");
      c.args.push_back(got);
      add(host, StepKind::CmEstablish, "rdma_establish", q.name, k);
    } else {
      auto& w = add(host, StepKind::CmWaitRequest, "rdma_get_cm_event", q.name, k);
      w.args.push_back(arg("listener", listener(q)));
      describe_wait(w, "RDMA_CM_EVENT_CONNECT_REQUEST");
      w.args.push_back(got);
      auto& a = add(host, StepKind::CmAccept, "rdma_accept", q.name, k);
      a.args.push_back(arg("qp_num", q.name + "'s", "carried in the REP", true));
      a.args.push_back(arg("private_data", exchange_text(s_, q), bytes, true));
      describe_wait(a, "RDMA_CM_EVENT_ESTABLISHED");
    }
    // The scenario's own RTR and RTS (and what follows them in bring-up), as states: says.
    bool past_init = false;
    for (size_t i = 0; i < q.transitions.size(); ++i) {
      const auto& t = q.transitions[i];
      if (!t.bring_up) break;
      past_init |= t.to == spec::QpState::RTR || t.to == spec::QpState::RTS;
      if (!past_init) continue;
      describe_modify(add(host, StepKind::Modify, "ibv_modify_qp", q.name, k), q, i, args_);
    }
  }

  void active(const Qp& q, int k) {
    const auto& cm = q.cm;
    std::string host = s_.host_of_qp(q);
    bool ud = q.qp_type == spec::QpType::UD;
    auto& ra = add(host, StepKind::CmResolveAddr, "rdma_resolve_addr", q.name, k);
    ra.args.push_back(arg("dst", endpoint(cm.address, cm.port)));
    describe_wait(ra, "RDMA_CM_EVENT_ADDR_RESOLVED");
    if (cm.expect_event == "ADDR_ERROR") return expect(ra, q);
    const auto* x = cm.peer ? s_.external(cm.peer.name) : nullptr;
    auto& rr = add(host, StepKind::CmResolveRoute, "rdma_resolve_route", q.name, k);
    describe_wait(rr, "RDMA_CM_EVENT_ROUTE_RESOLVED");
    if (cm.expect_event == "ROUTE_ERROR") return expect(rr, q);
    modify(q, spec::QpState::RESET, spec::QpState::INIT, k);
    receives(q, k);
    if (ud) {
      modify(q, spec::QpState::INIT, spec::QpState::RTR, k);
      modify(q, spec::QpState::RTR, spec::QpState::RTS, k);
    }
    auto& c = add(host, StepKind::CmConnect, "rdma_connect", q.name, k);
    c.args.push_back(arg("qp_num", q.name + "'s", "a QP qpo created (no rdma_create_qp)", true));
    if (!cm.private_data.empty()) c.args.push_back(arg("private_data", "'" + cm.private_data + "'"));
    if (!ud) {
      const char* n = uc(q) ? "0" : "1";
      c.args.push_back(arg("responder_resources", n, uc(q) ? "UC: no reads or atomics" : ""));
      c.args.push_back(arg("initiator_depth", n));
      c.args.push_back(arg("retry_count", uc(q) ? "0" : "7"));
      c.args.push_back(arg("rnr_retry_count", uc(q) ? "0" : "7"));
    }
    describe_wait(c, ud ? "RDMA_CM_EVENT_ESTABLISHED" : "RDMA_CM_EVENT_CONNECT_RESPONSE");
    if (x && cm.expect_event.empty())
      c.args.push_back(arg("retries", ud ? "while nothing listens (UNREACHABLE, status 1), until the phase timeout"
                                         : "while nothing listens (REJECTED, reason 8), until the phase timeout",
                           "external '" + x->name + "' may start after qpo: " + tool_command(*x, cm.port, false, workload_on(q))));
    if (ud) c.args.push_back(arg("peer", x ? "qp_num, qkey, address (external '" + x->name + "')" : std::string("qp_num, qkey"),
                                 "from the event: what the UD sends use", true));
    if (!cm.expect_event.empty()) return expect(c, q);
    if (ud) return;
    modify(q, spec::QpState::INIT, spec::QpState::INIT, k, "the access flags the connection grants (as librdmacm before RTR)");
    modify(q, spec::QpState::INIT, spec::QpState::RTR, k);
    modify(q, spec::QpState::RTR, spec::QpState::RTS, k);
    add(host, StepKind::CmEstablish, "rdma_establish", q.name, k);
  }

  void passive(const Qp& q, int k) {
    const auto& cm = q.cm;
    std::string host = s_.host_of_qp(q);
    bool ud = q.qp_type == spec::QpType::UD;
    auto& w = add(host, StepKind::CmWaitRequest, "rdma_get_cm_event", q.name, k);
    w.args.push_back(arg("listener", listener(q)));
    describe_wait(w, "RDMA_CM_EVENT_CONNECT_REQUEST");
    if (const auto* x = cm.peer ? s_.external(cm.peer.name) : nullptr) {
      Arg from = arg("accepts", x->from.empty() ? "the first request (external '" + x->name + "': any address)"
                                                : "only from " + x->from + "; any other request is rejected and named");
      from.runtime = true;
      from.note = "waits for the tool: " + tool_command(*x, cm.port, true, workload_on(q));
      if (x->rdma_cm)  // perftest -R: its client connects the test QP once the sync is answered
        w.args.push_back(arg("first", "qpo's keys: the answer to the sync the external exchange read",
                             "the tool connects its test QP as soon as it has them, so qpo listens first"));
      w.args.push_back(from);
    }
    if (cm.reject) {
      auto& r = add(host, StepKind::CmReject, "rdma_reject", q.name, k);
      r.args.push_back(arg("private_data", "'" + *cm.reject + "'"));
      return;
    }
    modify(q, spec::QpState::RESET, spec::QpState::INIT, k);
    receives(q, k);
    modify(q, spec::QpState::INIT, spec::QpState::RTR, k);
    if (ud) modify(q, spec::QpState::RTR, spec::QpState::RTS, k);
    auto& a = add(host, StepKind::CmAccept, "rdma_accept", q.name, k);
    a.args.push_back(arg("qp_num", q.name + "'s", "", true));
    if (!cm.private_data.empty()) a.args.push_back(arg("private_data", "'" + cm.private_data + "'"));
    if (ud) {
      a.args.push_back(arg("qkey", "RDMA_UDP_QKEY", "the CM's, set at INIT"));
      if (cm.peer && s_.external(cm.peer.name))
        a.args.push_back(arg("peer", "the address the request came from", "the tool's QP number comes in its first message", true));
      return;
    }
    a.args.push_back(arg("responder_resources", uc(q) ? "0" : "1"));
    a.args.push_back(arg("initiator_depth", uc(q) ? "0" : "1"));
    describe_wait(a, "RDMA_CM_EVENT_ESTABLISHED");
    modify(q, spec::QpState::RTR, spec::QpState::RTS, k);
  }

  const Scenario& s_;
  Plan& p_;

  // The carried MRs' keys: the check resolved every name (an MR or a window of the scenario).
  std::vector<BufferKey> carried_keys(const std::vector<std::string>& names) const {
    std::vector<BufferKey> out;
    for (const auto& name : names) {
      auto k = buffer_key(p_, name);
      if (!k) throw std::logic_error("MR '" + name + "' is carried by a connection but not in the plan");
      out.push_back(*k);
    }
    return out;
  }
  const scenario::BringupReceives* receives_;  // every QP's bring-up receive count (connect only)
  HostPlan nowhere_;
  ArgLists args_;
  std::unordered_map<std::string, int> end_index_;  // Plan::cm_ends by QP name
};

}  // namespace

std::string cm_event_name(const std::string& short_name) { return "RDMA_CM_EVENT_" + short_name; }

void plan_cm_connect(const Scenario& s, const scenario::BringupReceives& receives, Plan& p) {
  CmPlanner(s, p, &receives).connect();
}
void plan_cm_disconnect(const Scenario& s, Plan& p) { CmPlanner(s, p).disconnect(); }
void plan_cm_teardown(const Scenario& s, HostPlan& hp) {
  Plan unused;
  CmPlanner(s, unused).teardown(hp);
}

}  // namespace qpo::plan
