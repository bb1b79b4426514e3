// Scenario -> per-host ordered verbs calls. Order follows the bring-up guidance in
// ibv_modify_qp(3) and the RDMA programming manuals: resources, RESET->INIT, receives posted
// before RTR, out-of-band exchange, RTR, RTS, traffic, extra transitions, teardown in reverse.
#include <algorithm>

#include "plan/plan.h"
#include "scenario/script_qps.h"
#include "util/strings.h"

namespace qpo::plan {

namespace {

using scenario::Scenario;

class Planner {
 public:
  explicit Planner(const Scenario& s) : s_(s) {}

  Plan build() {
    Plan p;
    p.scenario = s_.name;
    p.file = s_.file;
    for (const auto& h : s_.hosts) {
      HostPlan hp;
      hp.host = h.name;
      hp.address = h.address;
      host_ = &hp;
      setup(h.name);
      faults(h.name, "all");  // before the QPs: the bring-up window holds nothing but QP verbs
      qp_creates(h.name);
      bring_up(h.name);
      traffic(h.name);
      extra_transitions(h.name);
      teardown(h.name);
      p.hosts.push_back(std::move(hp));
    }
    return p;
  }

 private:
  Step& add(Phase phase, std::string verb, std::string object) {
    Step st;
    st.index = static_cast<int>(host_->steps.size()) + 1;
    st.phase = phase;
    st.verb = std::move(verb);
    st.object = std::move(object);
    host_->steps.push_back(std::move(st));
    return host_->steps.back();
  }

  static Arg arg(std::string name, std::string value) { return Arg{std::move(name), std::move(value), false, false, ""}; }

  bool on_host(const std::string& device, const std::string& host) const { return s_.host_of_device(device) == host; }
  std::string device_of_pd(const std::string& pd) const {
    const auto* p = s_.pd(pd);
    return p ? p->device.name : "";
  }
  std::vector<const scenario::Qp*> qps_on(const std::string& host) const {
    std::vector<const scenario::Qp*> out;
    for (const auto& q : s_.qps)
      if (s_.host_of_qp(q) == host && q.type >= 0) out.push_back(&q);
    return out;
  }

  void setup(const std::string& host) {
    for (const auto& d : s_.devices) {
      if (d.host.name != host) continue;
      auto& st = add(Phase::Setup, "ibv_open_device", d.name);
      st.args.push_back(arg("name", d.dev_name == "auto" ? "auto (first active device)" : d.dev_name));
      auto& port = add(Phase::Setup, "ibv_query_port", d.name);
      port.args.push_back(arg("port_num", std::to_string(d.port)));
      auto& gid = add(Phase::Setup, "ibv_query_gid", d.name);
      Arg gi = arg("gid_index", d.gid_symbol == scenario::Symbol::Auto ? "auto" : std::to_string(d.gid_index));
      if (d.gid_symbol == scenario::Symbol::Auto) {
        gi.runtime = true;
        gi.note = "RoCEv2 IPv4-mapped GID if present, else index 0";
      }
      gid.args.push_back(gi);
    }
    for (const auto& pd : s_.pds)
      if (on_host(pd.device.name, host)) add(Phase::Setup, "ibv_alloc_pd", pd.name).args.push_back(arg("device", pd.device.name));
    for (const auto& x : s_.xrcds)
      if (on_host(x.device.name, host)) add(Phase::Setup, "ibv_open_xrcd", x.name).args.push_back(arg("device", x.device.name));
    for (const auto& m : s_.mrs) {
      if (!on_host(device_of_pd(m.pd.name), host)) continue;
      auto& st = add(Phase::Setup, "ibv_reg_mr", m.name);
      st.args.push_back(arg("pd", m.pd.name));
      st.args.push_back(arg("length", std::to_string(m.size)));
      Arg access = describe_attr(scenario::Attr{"qp_access_flags", {}, {}, "", "", scenario::Symbol::None, m.access});
      access.name = "access";
      st.args.push_back(access);
    }
    for (const auto& c : s_.cqs) {
      if (!on_host(c.device.name, host)) continue;
      if (c.channel) add(Phase::Setup, "ibv_create_comp_channel", c.name + ".channel");
      auto& st = add(Phase::Setup, "ibv_create_cq", c.name);
      st.args.push_back(arg("cqe", std::to_string(c.depth)));
      if (c.channel) st.args.push_back(arg("channel", c.name + ".channel"));
    }
    for (const auto& sr : s_.srqs) {
      if (!on_host(device_of_pd(sr.pd.name), host)) continue;
      auto& st = add(Phase::Setup, "ibv_create_srq", sr.name);
      st.args.push_back(arg("pd", sr.pd.name));
      st.args.push_back(arg("max_wr", std::to_string(sr.max_wr)));
      st.args.push_back(arg("max_sge", std::to_string(sr.max_sge)));
    }
  }

  // The last setup steps: the bring-up window opens at the first of them.
  void qp_creates(const std::string& host) {
    for (const auto* q : qps_on(host)) {
      auto& st = add(Phase::Setup, q->type_name.rfind("XRC", 0) == 0 ? "ibv_create_qp_ex" : "ibv_create_qp", q->name);
      st.args.push_back(arg("qp_type", "IBV_QPT_" + q->type_name));
      if (q->type_name != "XRC_RECV") st.args.push_back(arg("pd", q->pd.name));
      if (q->send_cq) st.args.push_back(arg("send_cq", q->send_cq.name));
      if (q->recv_cq) st.args.push_back(arg("recv_cq", q->recv_cq.name));
      if (q->srq) st.args.push_back(arg("srq", q->srq.name));
      if (q->xrcd) st.args.push_back(arg("xrcd", q->xrcd.name));
      if (q->type_name != "XRC_RECV") {
        st.args.push_back(arg("cap.max_send_wr", std::to_string(q->cap.max_send_wr)));
        st.args.push_back(arg("cap.max_recv_wr", std::to_string(q->srq ? 0 : q->cap.max_recv_wr)));
        st.args.push_back(arg("cap.max_send_sge", std::to_string(q->cap.max_send_sge)));
        st.args.push_back(arg("cap.max_recv_sge", std::to_string(q->cap.max_recv_sge)));
        st.args.push_back(arg("cap.max_inline_data", std::to_string(q->cap.max_inline_data)));
        st.args.push_back(arg("sq_sig_all", q->sq_sig_all ? "1" : "0"));
      }
    }
  }

  void modify(const scenario::Qp& q, size_t index, Phase phase) {
    const auto& t = q.transitions[index];
    auto& st = add(phase, "ibv_modify_qp", q.name);
    st.has_mask = true;
    st.mask = t.mask;
    st.from_state = spec::state_name(t.from);
    st.to_state = spec::state_name(t.to);
    st.transition_index = static_cast<int>(index);
    st.args.push_back(arg("qp_state", std::string("IBV_QPS_") + spec::state_name(t.to)));
    for (const auto& a : t.attrs)
      for (auto& d : describe_attr_tree(a)) st.args.push_back(std::move(d));
    bool expects_fail = t.expect && t.expect->errno_value != 0;
    if (expects_fail) st.expect = t.expect->errno_name;
    if (t.predicted_ok) st.prediction = expects_fail ? "ok (but " + t.expect->errno_name + " expected)" : "ok";
    else st.prediction = expects_fail ? "EINVAL (expected " + t.expect->errno_name + ")" : "EINVAL";
  }

  // Transitions up to (not including) the first one that needs the peer, then receives,
  // then the exchange, then the rest of bring-up.
  void bring_up(const std::string& host) {
    auto qps = qps_on(host);
    std::vector<size_t> next(qps.size(), 0);
    for (size_t i = 0; i < qps.size(); ++i) {
      const auto& tr = qps[i]->transitions;
      while (next[i] < tr.size() && tr[next[i]].bring_up && tr[next[i]].to != spec::QpState::RTR &&
             tr[next[i]].to != spec::QpState::RTS) {
        modify(*qps[i], next[i], Phase::BringUp);
        ++next[i];
      }
    }
    for (const auto* q : qps) {
      if (q->srq || q->type_name == "XRC_SEND" || q->type_name == "XRC_RECV" || q->cap.max_recv_wr == 0) continue;
      bool reaches_init = false;
      for (const auto& t : q->transitions)
        if (t.bring_up && t.predicted_ok && t.to == spec::QpState::INIT) reaches_init = true;
      if (!reaches_init) continue;
      auto& st = add(Phase::BringUp, "ibv_post_recv", q->name);
      uint32_t count = scenario::bringup_receives(s_, *q);
      st.args.push_back(arg("wr_count", std::to_string(count)));
      st.args.back().note = count == q->cap.max_recv_wr ? "fill the receive queue before RTR"
                                                        : "for the smoke exchange; scripts post their own";
    }
    for (const auto& sr : s_.srqs) {
      if (!on_host(device_of_pd(sr.pd.name), host)) continue;
      add(Phase::BringUp, "ibv_post_srq_recv", sr.name)
          .args.push_back(arg("wr_count", std::to_string(scenario::bringup_srq_receives(s_, sr))));
    }
    if (!qps.empty()) {
      auto& pub = add(Phase::Exchange, "publish", host);
      pub.args.push_back(arg("per QP", "qp_num, sq_psn, port lid, gid, active_mtu"));
      pub.args.push_back(arg("per MR", "addr, length, rkey"));
      auto& res = add(Phase::Exchange, "resolve", host);
      res.args.push_back(arg("peer values", "dest_qp_num, rq_psn, ah_attr.dlid, ah_attr.grh.dgid, path_mtu"));
      res.args.back().runtime = true;
      res.args.back().note = "waits for every peer host to publish";
    }
    for (size_t i = 0; i < qps.size(); ++i) {
      const auto& tr = qps[i]->transitions;
      while (next[i] < tr.size() && tr[next[i]].bring_up) {
        modify(*qps[i], next[i], Phase::BringUp);
        ++next[i];
      }
    }
    if (!qps.empty() && s_.hosts.size() > 1) add(Phase::Exchange, "barrier", "all hosts").args.push_back(arg("after", "bring-up"));
  }

  void faults(const std::string& host, const std::string& window) {
    for (const auto& f : s_.faults) {
      if (!on_host(f.device.name, host) || f.during != window) continue;
      auto& st = add(window == "all" ? Phase::Setup : Phase::Traffic, "tc qdisc replace netem", f.name);
      st.args.push_back(arg("device", f.device.name + " (its netdev)"));
      char buf[160];
      std::snprintf(buf, sizeof buf, "loss %.3g%% delay %lluus corrupt %.3g%% duplicate %.3g%% reorder %.3g%%", f.loss,
                    static_cast<unsigned long long>(f.delay_us), f.corrupt, f.duplicate, f.reorder);
      st.args.push_back(arg("netem", buf));
      st.args.push_back(arg("during", f.during));
    }
  }

  void traffic(const std::string& host) {
    faults(host, "traffic");
    for (const auto& w : s_.workloads) {
      const auto* q = s_.qp(w.qp.name);
      if (!q || s_.host_of_qp(*q) != host) continue;
      auto& st = add(Phase::Traffic, w.script.empty() ? "workload" : "script", w.name);
      st.args.push_back(arg("qp", w.qp.name));
      if (!w.op.empty()) st.args.push_back(arg("op", "IBV_WR_" + util::to_upper(w.op)));
      if (w.local_mr) st.args.push_back(arg("local_mr", w.local_mr.name));
      if (w.remote_mr) {
        st.args.push_back(arg("remote_mr", w.remote_mr.name));
        st.args.push_back(Arg{"remote addr/rkey", "peer", true, false, "known after exchange"});
      }
      st.args.push_back(arg("size", std::to_string(w.size)));
      st.args.push_back(arg("iterations", std::to_string(w.iterations)));
      if (!w.script.empty()) st.args.push_back(arg("script", w.script));
      if (w.expect_status) st.expect = *w.expect_status;
    }
  }

  void extra_transitions(const std::string& host) {
    for (const auto* q : qps_on(host))
      for (size_t i = 0; i < q->transitions.size(); ++i)
        if (!q->transitions[i].bring_up) modify(*q, i, Phase::Transitions);
  }

  void teardown(const std::string& host) {
    // Reverse creation order: QPs, SRQs, CQs (then their channels), MRs, XRCDs, PDs, devices.
    auto qps = qps_on(host);
    for (auto it = qps.rbegin(); it != qps.rend(); ++it) add(Phase::Teardown, "ibv_destroy_qp", (*it)->name);
    for (auto it = s_.srqs.rbegin(); it != s_.srqs.rend(); ++it)
      if (on_host(device_of_pd(it->pd.name), host)) add(Phase::Teardown, "ibv_destroy_srq", it->name);
    for (auto it = s_.cqs.rbegin(); it != s_.cqs.rend(); ++it) {
      if (!on_host(it->device.name, host)) continue;
      add(Phase::Teardown, "ibv_destroy_cq", it->name);
      if (it->channel) add(Phase::Teardown, "ibv_destroy_comp_channel", it->name + ".channel");
    }
    for (auto it = s_.mrs.rbegin(); it != s_.mrs.rend(); ++it)
      if (on_host(device_of_pd(it->pd.name), host)) add(Phase::Teardown, "ibv_dereg_mr", it->name);
    for (auto it = s_.xrcds.rbegin(); it != s_.xrcds.rend(); ++it)
      if (on_host(it->device.name, host)) add(Phase::Teardown, "ibv_close_xrcd", it->name);
    for (auto it = s_.pds.rbegin(); it != s_.pds.rend(); ++it)
      if (on_host(it->device.name, host)) add(Phase::Teardown, "ibv_dealloc_pd", it->name);
    for (auto it = s_.devices.rbegin(); it != s_.devices.rend(); ++it)
      if (it->host.name == host) add(Phase::Teardown, "ibv_close_device", it->name);
  }

  const Scenario& s_;
  HostPlan* host_ = nullptr;
};

}  // namespace

const char* phase_name(Phase p) {
  switch (p) {
    case Phase::Setup: return "setup";
    case Phase::BringUp: return "bring-up";
    case Phase::Exchange: return "exchange";
    case Phase::Traffic: return "traffic";
    case Phase::Transitions: return "transitions";
    case Phase::Teardown: return "teardown";
  }
  return "?";
}

size_t Plan::step_count() const {
  size_t n = 0;
  for (const auto& h : hosts) n += h.steps.size();
  return n;
}

Plan build_plan(const Scenario& s) { return Planner(s).build(); }

}  // namespace qpo::plan
