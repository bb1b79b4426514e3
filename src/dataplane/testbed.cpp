#include "dataplane/testbed.h"

#include <algorithm>
#include <stdexcept>

#include "verbs/device.h"
#include "verbs/qp_control.h"
#include "verbs/resources.h"

namespace qpo::dataplane {

namespace {

constexpr uint32_t kQkey = 0x11111111;

ibv_qp_type qp_type(const std::string& t) {
  if (t == "RC") return IBV_QPT_RC;
  if (t == "UC") return IBV_QPT_UC;
  if (t == "UD") return IBV_QPT_UD;
  throw std::invalid_argument("testbed: QP type " + t + " (RC, UC or UD)");
}

}  // namespace

Testbed::Testbed(const std::string& device, int gid_index) : device_(device) {
  new_side();
  gid_index_ = gid_index >= 0 ? gid_index : ctx().auto_gid_index();
}

void Testbed::new_side() {
  std::string name = "testbed" + (sides_.empty() ? std::string() : "." + std::to_string(sides_.size()));
  Side side;
  side.ctx = std::make_unique<verbs::Context>(device_, 1, name);
  auto pd = std::make_unique<verbs::Pd>(name + ".pd", side.ctx->get());
  side.pd = pd->get();
  sides_.push_back(std::move(side));
  owned_.push_back(std::move(pd));
}

ibv_context* Testbed::current_ctx() const { return sides_.back().ctx->get(); }

Testbed::~Testbed() {
  eps_.clear();
  while (!owned_.empty()) owned_.pop_back();  // reverse creation order: QPs before CQs, MRs before the PD
}

const std::string& Testbed::device_name() const { return ctx().device_name(); }

void Testbed::add_mr(const std::string& name, size_t size) {
  int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
  auto mr = std::make_unique<verbs::Mr>(name, current_pd(), size, access);
  LocalMr local{mr->get(), mr->data(), mr->length()};
  mrs_[name] = {local, current_side()};
  owned_.push_back(std::move(mr));
  for (auto& [qp, ep] : eps_) {
    if (qp_side_.at(qp) == current_side()) ep.local_mrs.add(name, local);
    ep.remote_mrs.add(name, {reinterpret_cast<uintptr_t>(local.data), local.mr->rkey, size});
  }
}

void Testbed::add_cq(const std::string& name, int depth, bool channel, bool extended) {
  ibv_comp_channel* ch = nullptr;
  if (channel) {
    auto c = std::make_unique<verbs::CompChannel>(name + ".channel", current_ctx());
    ch = c->get();
    owned_.push_back(std::move(c));
  }
  auto cq = extended ? std::make_unique<verbs::Cq>(name, current_ctx(), depth, ch,
                                                  verbs::Cq::Extended{IBV_WC_STANDARD_FLAGS, "IBV_WC_STANDARD_FLAGS"})
                     : std::make_unique<verbs::Cq>(name, current_ctx(), depth, ch);
  cqs_[name] = cq->get();
  cq_exs_[name] = cq->extended();
  channels_[name] = ch;
  owned_.push_back(std::move(cq));
}

void Testbed::add_srq(const std::string& name, uint32_t max_wr) {
  auto srq = std::make_unique<verbs::Srq>(name, current_pd(), max_wr, 1);
  srqs_[name] = srq->get();
  owned_.push_back(std::move(srq));
}

void Testbed::add_qp(const std::string& name, const TestbedQp& q) {
  ibv_qp_init_attr init{};
  init.qp_type = qp_type(q.type);
  init.send_cq = cqs_.at(q.send_cq);
  init.recv_cq = cqs_.at(q.recv_cq);
  init.srq = q.srq.empty() ? nullptr : srqs_.at(q.srq);
  init.cap.max_send_wr = q.max_send_wr;
  init.cap.max_recv_wr = q.srq.empty() ? q.max_recv_wr : 0;
  init.cap.max_send_sge = 1;
  init.cap.max_recv_sge = 1;
  init.cap.max_inline_data = q.max_inline;
  auto qp = std::make_unique<verbs::Qp>(name, current_ctx(), current_pd(), nullptr, init);
  Endpoint ep;
  ep.qp_name = name;
  ep.qp_type = init.qp_type;
  ep.type_name = q.type;
  ep.qp = qp->get();
  ep.qpx = old_post_send_ ? nullptr : qp->extended();
  ep.pd = current_pd();
  ep.send_cq = init.send_cq;
  ep.recv_cq = init.recv_cq;
  ep.srq = init.srq;
  ep.send_channel = channels_.at(q.send_cq);
  ep.recv_channel = channels_.at(q.recv_cq);
  ep.max_send_wr = init.cap.max_send_wr;
  ep.max_recv_wr = init.cap.max_recv_wr;
  ep.recv_limited = !ep.srq;
  ep.max_inline_data = init.cap.max_inline_data;
  for (const auto& [mr, m] : mrs_) {
    if (m.side == current_side()) ep.local_mrs.add(mr, m.mr);
    ep.remote_mrs.add(mr, {reinterpret_cast<uintptr_t>(m.mr.data), m.mr.mr->rkey, m.mr.length});
  }
  owned_.push_back(std::move(qp));
  qp_side_[name] = current_side();
  eps_[name] = std::move(ep);
}

void Testbed::to_rts(const std::string& name, uint32_t dest_qpn, uint32_t psn, uint32_t dest_psn) {
  Endpoint& ep = eps_.at(name);
  ibv_qp* qp = ep.qp;
  bool ud = ep.qp_type == IBV_QPT_UD, rc = ep.qp_type == IBV_QPT_RC;
  // Connected again (a UD receiver in a fan-in is connected to each sender): already up.
  ibv_qp_state state{};
  if (verbs::query_state(qp, &state) == 0 && state != IBV_QPS_RESET) return;
  // As perftest -o defaults: as many outstanding reads/atomics as the device allows.
  int rd_atom = std::max(1, std::min(ctx().device_attr().max_qp_rd_atom, 255));
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_INIT;
  a.pkey_index = 0;
  a.port_num = ctx().port();
  int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
  if (ud) {
    a.qkey = kQkey;
    mask |= IBV_QP_QKEY;
  } else {
    a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | (rc ? IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC : 0);
    mask |= IBV_QP_ACCESS_FLAGS;
  }
  verbs::modify_qp_or_throw(qp, a, mask, name, "RESET->INIT");

  a = {};
  a.qp_state = IBV_QPS_RTR;
  mask = IBV_QP_STATE;
  if (!ud) {
    a.path_mtu = ctx().port_attr().active_mtu;
    a.dest_qp_num = dest_qpn;
    a.rq_psn = dest_psn;
    a.ah_attr.is_global = 1;
    a.ah_attr.port_num = ctx().port();
    a.ah_attr.grh.dgid = ctx().gid(gid_index_);
    a.ah_attr.grh.sgid_index = static_cast<uint8_t>(gid_index_);
    a.ah_attr.grh.hop_limit = 1;
    mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
    if (rc) {
      a.max_dest_rd_atomic = static_cast<uint8_t>(rd_atom);
      a.min_rnr_timer = 12;
      mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
    }
  }
  verbs::modify_qp_or_throw(qp, a, mask, name, "INIT->RTR");

  a = {};
  a.qp_state = IBV_QPS_RTS;
  a.sq_psn = psn;
  mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
  if (rc) {
    a.timeout = 14;
    a.retry_cnt = 7;
    a.rnr_retry = 7;
    a.max_rd_atomic = static_cast<uint8_t>(rd_atom);
    mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
  }
  verbs::modify_qp_or_throw(qp, a, mask, name, "RTR->RTS");
}

void Testbed::connect(const std::string& a, const std::string& b) {
  Endpoint& ea = eps_.at(a);
  Endpoint& eb = eps_.at(b);
  if (ea.qp_type != eb.qp_type) throw std::invalid_argument("testbed: cannot connect " + ea.type_name + " to " + eb.type_name);
  constexpr uint32_t kPsnA = 0x1000, kPsnB = 0x2000;
  to_rts(a, eb.qp->qp_num, kPsnA, kPsnB);
  to_rts(b, ea.qp->qp_num, kPsnB, kPsnA);
  auto link = [&](Endpoint& from, Endpoint& to) {
    from.peer_name = to.qp_name;
    from.peer_qpn = to.qp->qp_num;
    from.peer_qkey = kQkey;
    if (from.qp_type != IBV_QPT_UD) return;
    ibv_ah_attr ah{};
    ah.is_global = 1;
    ah.port_num = ctx().port();
    ah.grh.dgid = ctx().gid(gid_index_);
    ah.grh.sgid_index = static_cast<uint8_t>(gid_index_);
    ah.grh.hop_limit = 1;
    auto res = std::make_unique<verbs::Ah>(from.qp_name + "->" + to.qp_name, from.pd, ah);
    from.peer_ah = res->get();
    owned_.push_back(std::move(res));
  };
  link(ea, eb);
  link(eb, ea);
}

}  // namespace qpo::dataplane
