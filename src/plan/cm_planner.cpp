#include "plan/cm_planner.h"

#include <set>

#include "scenario/script_qps.h"

namespace qpo::plan {

namespace {

using scenario::Qp;
using scenario::Scenario;

Arg arg(std::string name, std::string value, std::string note = "", bool runtime = false) {
  return Arg{std::move(name), std::move(value), runtime, false, std::move(note)};
}

bool has_cm(const Scenario& s) {
  for (const auto& q : s.qps)
    if (q.cm.given && q.type >= 0) return true;
  return false;
}

std::string ps_of(const Qp& q) { return q.type_name == "UD" ? "RDMA_PS_UDP" : "RDMA_PS_TCP"; }

// IPv6 literals in brackets: [fd00:1::2]:7471.
std::string endpoint(const std::string& ip, uint32_t port) {
  return (ip.find(':') != std::string::npos ? "[" + ip + "]" : ip) + ":" + std::to_string(port);
}

class CmPlanner {
 public:
  CmPlanner(const Scenario& s, Plan& p) : s_(s), p_(p) {}

  void connect() {
    if (!has_cm(s_)) return;
    int k = stage("cm listen");
    for (const auto& h : p_.hosts) {
      bool any = false;
      for (const auto& q : s_.qps) any |= q.cm.given && q.type >= 0 && s_.host_of_qp(q) == h.host;
      if (any) add(h.host, StepKind::CmChannel, "rdma_create_event_channel", channel_name(h.host), k);
    }
    for (const auto& q : s_.qps) {
      if (!q.cm.given || q.type < 0) continue;
      std::string host = s_.host_of_qp(q);
      auto& id = add(host, StepKind::CmCreateId, "rdma_create_id", q.cm.active ? q.name : listener(q), k);
      id.args.push_back(arg("channel", channel_name(host)));
      id.args.push_back(arg("port_space", ps_of(q)));
      if (q.cm.active) continue;
      auto& l = add(host, StepKind::CmListen, "rdma_bind_addr + rdma_listen", listener(q), k);
      l.args.push_back(arg("address", endpoint(q.cm.address.empty() ? "::" : q.cm.address, q.cm.port),
                           q.cm.address.empty() ? "every address, IPv4 too" : ""));
      l.args.push_back(arg("backlog", "1"));
    }
    k = stage("cm connect");
    for (const auto& q : s_.qps) {
      if (!q.cm.given || q.type < 0) continue;
      if (q.cm.active) active(q, k);
      else passive(q, k);
    }
  }

  void disconnect() {
    int k = -1;
    for (const auto& q : s_.qps) {
      if (!q.cm.given || q.type < 0 || q.type_name == "UD" || q.cm.end_state() != spec::QpState::RTS) continue;
      if (k < 0) k = stage("cm disconnect");
      std::string host = s_.host_of_qp(q);
      auto& st = add(host, StepKind::CmDisconnect, "rdma_disconnect", q.name, k);
      if (!q.cm.active) st.args.push_back(arg("after", "the peer's DREQ", "answers it with a DREP"));
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
  static std::string listener(const Qp& q) { return q.name + ".listener"; }

  int stage(std::string name) {
    p_.stages.push_back(std::move(name));
    return static_cast<int>(p_.stages.size()) - 1;
  }

  HostPlan* host(const std::string& name) {
    for (auto& h : p_.hosts)
      if (h.host == name) return &h;
    return nullptr;
  }

  Step& add(const std::string& host_name, StepKind kind, Text verb, std::string object, int k) {
    HostPlan* h = host(host_name);
    auto& steps = h ? h->steps : nowhere_.steps;
    // Built in place, in the list reserved for the whole plan.
    Step& st = steps.emplace_back();
    st.index = static_cast<int>(steps.size());
    st.kind = kind;
    st.phase = kind == StepKind::CmDisconnect ? Phase::Transitions : Phase::BringUp;
    st.verb = verb;
    st.object = std::move(object);
    st.stage = k;
    return st;
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

  void modify(const Qp& q, Text from, Text to, int k, const char* note = "") {
    auto& st = add(s_.host_of_qp(q), StepKind::CmModify, "ibv_modify_qp", q.name, k);
    st.from_state = from;
    st.to_state = to;
    st.args.push_back(arg("transition", std::string(from) + "->" + to));
    st.args.push_back(arg("qp_state", std::string("IBV_QPS_") + to));
    st.args.push_back(arg("attributes", "rdma_init_qp_attr", *note ? note : "the CM's values and attr_mask", true));
  }

  void receives(const Qp& q, int k) {
    if (q.srq || q.cap.max_recv_wr == 0) return;
    auto& st = add(s_.host_of_qp(q), StepKind::PostRecv, "ibv_post_recv", q.name, k);
    uint32_t count = scenario::bringup_receives(s_, q);
    st.args.push_back(arg("wr_count", std::to_string(count), "before RTR"));
  }

  void active(const Qp& q, int k) {
    const auto& cm = q.cm;
    std::string host = s_.host_of_qp(q);
    bool ud = q.type_name == "UD";
    auto& ra = add(host, StepKind::CmResolveAddr, "rdma_resolve_addr", q.name, k);
    ra.args.push_back(arg("dst", endpoint(cm.address, cm.port)));
    describe_wait(ra, "RDMA_CM_EVENT_ADDR_RESOLVED");
    if (cm.expect_event == "ADDR_ERROR") return expect(ra, q);
    auto& rr = add(host, StepKind::CmResolveRoute, "rdma_resolve_route", q.name, k);
    describe_wait(rr, "RDMA_CM_EVENT_ROUTE_RESOLVED");
    if (cm.expect_event == "ROUTE_ERROR") return expect(rr, q);
    modify(q, "RESET", "INIT", k);
    receives(q, k);
    if (ud) {
      modify(q, "INIT", "RTR", k);
      modify(q, "RTR", "RTS", k);
    }
    auto& c = add(host, StepKind::CmConnect, "rdma_connect", q.name, k);
    c.args.push_back(arg("qp_num", q.name + "'s", "a QP qpo created (no rdma_create_qp)", true));
    if (!cm.private_data.empty()) c.args.push_back(arg("private_data", "'" + cm.private_data + "'"));
    if (!ud) {
      c.args.push_back(arg("responder_resources", "1"));
      c.args.push_back(arg("initiator_depth", "1"));
      c.args.push_back(arg("retry_count", "7"));
      c.args.push_back(arg("rnr_retry_count", "7"));
    }
    describe_wait(c, ud ? "RDMA_CM_EVENT_ESTABLISHED" : "RDMA_CM_EVENT_CONNECT_RESPONSE");
    if (ud) c.args.push_back(arg("peer", "qp_num, qkey", "from the event: what the UD sends use", true));
    if (!cm.expect_event.empty()) return expect(c, q);
    if (ud) return;
    modify(q, "INIT", "INIT", k, "the access flags the connection grants (as librdmacm before RTR)");
    modify(q, "INIT", "RTR", k);
    modify(q, "RTR", "RTS", k);
    add(host, StepKind::CmEstablish, "rdma_establish", q.name, k);
  }

  void passive(const Qp& q, int k) {
    const auto& cm = q.cm;
    std::string host = s_.host_of_qp(q);
    bool ud = q.type_name == "UD";
    auto& w = add(host, StepKind::CmWaitRequest, "rdma_get_cm_event", q.name, k);
    w.args.push_back(arg("listener", listener(q)));
    describe_wait(w, "RDMA_CM_EVENT_CONNECT_REQUEST");
    if (cm.reject) {
      auto& r = add(host, StepKind::CmReject, "rdma_reject", q.name, k);
      r.args.push_back(arg("private_data", "'" + *cm.reject + "'"));
      return;
    }
    modify(q, "RESET", "INIT", k);
    receives(q, k);
    modify(q, "INIT", "RTR", k);
    if (ud) modify(q, "RTR", "RTS", k);
    auto& a = add(host, StepKind::CmAccept, "rdma_accept", q.name, k);
    a.args.push_back(arg("qp_num", q.name + "'s", "", true));
    if (!cm.private_data.empty()) a.args.push_back(arg("private_data", "'" + cm.private_data + "'"));
    if (ud) {
      a.args.push_back(arg("qkey", "RDMA_UDP_QKEY", "the CM's, set at INIT"));
      return;
    }
    a.args.push_back(arg("responder_resources", "1"));
    a.args.push_back(arg("initiator_depth", "1"));
    describe_wait(a, "RDMA_CM_EVENT_ESTABLISHED");
    modify(q, "RTR", "RTS", k);
  }

  const Scenario& s_;
  Plan& p_;
  HostPlan nowhere_;
};

}  // namespace

std::string cm_event_name(const std::string& short_name) { return "RDMA_CM_EVENT_" + short_name; }

void plan_cm_connect(const Scenario& s, Plan& p) { CmPlanner(s, p).connect(); }
void plan_cm_disconnect(const Scenario& s, Plan& p) { CmPlanner(s, p).disconnect(); }
void plan_cm_teardown(const Scenario& s, HostPlan& hp) {
  Plan unused;
  CmPlanner(s, unused).teardown(hp);
}

}  // namespace qpo::plan
