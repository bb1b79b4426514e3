#include "exec/endpoints.h"

#include <chrono>
#include <thread>

#include "exec/directory_names.h"
#include "exec/steps.h"
#include "verbs/qp_control.h"
#include "verbs/qp_type.h"

namespace qpo::exec {

namespace {

// Just enough endpoint for a pool to post receives (bring-up: no MR maps, no peer).
dataplane::Endpoint receive_endpoint(const std::string& name, ibv_qp* qp, ibv_srq* srq) {
  dataplane::Endpoint e;
  e.qp_name = name;
  e.qp = qp;
  e.srq = srq;
  return e;
}

dataplane::LocalMr local_of(verbs::Mr* m) { return {m->get(), m->data(), m->length()}; }

// The send CQ's timestamps and the clock that stamps them, for latency on the device's clock.
dataplane::DeviceClock device_clock_of(const QpState& q) {
  dataplane::DeviceClock c;
  if (!q.send_cq_res || !q.send_cq_res->extended() || !q.device) return c;
  c.cq = q.send_cq_res->extended();
  ibv_device_attr_ex ex{};
  if (verbs::query_device_ex(q.device->ctx().get(), ex) == 0) {
    c.khz = ex.hca_core_clock;
    c.mask = ex.completion_timestamp_mask;
  }
  return c;
}

}  // namespace

std::shared_ptr<dataplane::RecvPool> pool_of(QpState& q) {
  std::shared_ptr<dataplane::RecvPool>* slot = &q.recv_pool;
  if (q.srq && q.srq_state) slot = &q.srq_state->recv_pool;
  if (!*slot) *slot = std::make_shared<dataplane::RecvPool>();
  return *slot;
}

std::string slot_mr_name(const QpState& q) { return "qpo.slots." + q.facts->name; }
std::string receive_mr_name(const QpState& q) { return q.srq ? "qpo.slots." + q.srq_state->srq->name() : slot_mr_name(q); }

uint32_t bringup_outstanding(QpState& q) {
  if (q.srq) {
    const SrqState* ss = q.srq_state;
    if (!ss || !ss->slots || !ss->recv_pool) return 0;
    return ss->recv_pool->outstanding_in(ss->slots->data());
  }
  return q.slots && q.recv_pool ? q.recv_pool->outstanding_in(q.slots->data()) : 0;
}

EndpointMrs endpoint_mrs(const RunState& st) {
  std::map<const ibv_pd*, std::shared_ptr<dataplane::MrNames<dataplane::LocalMr>::Table>> local;
  // The scenario's MRs by PD (an XRC receive QP has no ibv_pd of its own: its `pd:`'s), by the
  // names scripts and workloads give them.
  st.mrs.for_each([&](plan::ObjectId, verbs::Mr* mr) {
    auto& table = local[mr->get()->pd];
    if (!table) table = std::make_shared<dataplane::MrNames<dataplane::LocalMr>::Table>();
    table->emplace(mr->name(), local_of(mr));
  });
  auto remote = std::make_shared<dataplane::MrNames<dataplane::RemoteMr>::Table>();
  // By name, as scripts and workloads name them; where kinds share a name the plan's
  // precedence decides (a window over the MR of the same name).
  for (auto kind : kByPrecedence)
    for (const auto& [key, r] : st.dir.mrs)
      if (key.kind == kind)
        if (std::string name = mr_key_name(*st.plan, key); !name.empty())  // "": not in this plan
          remote->emplace(std::move(name), dataplane::RemoteMr{r.addr, r.rkey, r.length});
  EndpointMrs out;
  for (auto& [pd, table] : local) out.local.emplace(pd, std::move(table));
  out.remote = std::move(remote);
  return out;
}

namespace {

// The QP, its CQs, SRQ and limits, and the peer: an endpoint without MRs.
dataplane::Endpoint bare_endpoint(RunState& st, QpState& q, plan::ObjectId peer) {
  dataplane::Endpoint e;
  e.qp_name = q.facts->name;
  e.qp_type = verbs::to_ibv(q.facts->type);
  e.type_name = q.facts->type_name;
  e.qp = q.qp->get();
  e.qpx = q.qp->extended();
  e.pd = q.pd;
  e.send_cq = q.send_cq;
  e.recv_cq = q.recv_cq;
  e.send_clock = device_clock_of(q);
  e.send_channel = q.send_channel;  // event mode (`events = true`)
  e.recv_channel = q.recv_channel;
  e.srq = q.srq;
  e.max_send_wr = q.facts->cap.max_send_wr;
  // The room a script has: receives the executor still has posted take the rest.
  uint32_t executors = q.srq ? 0 : bringup_outstanding(q);
  e.max_recv_wr = q.facts->cap.max_recv_wr > executors ? q.facts->cap.max_recv_wr - executors : 0;
  e.recv_limited = !q.srq;  // 0 left is "full", not "no limit"
  e.max_inline_data = q.facts->cap.max_inline_data;
  if (auto it = st.dir.qps.find(peer); peer != plan::kNoObject && it != st.dir.qps.end()) {
    e.peer_name = st.plan->peer_name(peer);
    e.peer_qpn = it->second.qpn;
    e.peer_qkey = it->second.qkey;
    if (e.qp_type == IBV_QPT_UD) e.peer_ah = peer_ah(st, q, peer, it->second);
  }
  e.recv_pool = pool_of(q);
  return e;
}

// The executor's slot buffers: the QP's own and its SRQ's.
void add_slots(QpState& q, dataplane::Endpoint& e) {
  e.max_recv_wr = q.facts->cap.max_recv_wr;  // the executor's receives are its own to count
  if (q.slots) e.local_mrs.add(slot_mr_name(q), local_of(q.slots));
  if (q.srq && q.srq_state && q.srq_state->slots) e.local_mrs.add(receive_mr_name(q), local_of(q.srq_state->slots));
}

}  // namespace

dataplane::Endpoint endpoint_for(RunState& st, QpState& q, plan::ObjectId peer, const EndpointMrs* mrs) {
  EndpointMrs made;
  if (!mrs) mrs = &(made = endpoint_mrs(st));
  dataplane::Endpoint e = bare_endpoint(st, q, peer);
  if (auto it = q.pd_res ? mrs->local.find(q.pd_res->get()) : mrs->local.end(); it != mrs->local.end())
    e.local_mrs = dataplane::MrNames<dataplane::LocalMr>(it->second);
  e.remote_mrs = dataplane::MrNames<dataplane::RemoteMr>(mrs->remote);
  return e;
}

dataplane::Endpoint own_endpoint(RunState& st, QpState& q, plan::ObjectId peer, const EndpointMrs* mrs) {
  dataplane::Endpoint e = endpoint_for(st, q, peer, mrs);
  add_slots(q, e);
  return e;
}

dataplane::Endpoint slots_endpoint(RunState& st, QpState& q, plan::ObjectId peer, bool peer_slots) {
  dataplane::Endpoint e = bare_endpoint(st, q, peer);
  add_slots(q, e);
  plan::QpId peer_id = peer_slots && peer < st.plan->qp_count() ? peer : plan::kNoQp;  // a QP's, not an external's
  if (auto it = st.dir.mrs.find(slots_key(peer_id)); peer_id != plan::kNoQp && it != st.dir.mrs.end())
    e.remote_mrs.add(mr_key_name(*st.plan, it->first), {it->second.addr, it->second.rkey, it->second.length});
  return e;
}

void executor_stream(dataplane::StreamConfig& c) {
  c.check_cq_room = false;
  c.yield_when_idle = true;
  c.peak = false;
}

void use_executor_receives(QpState& q, dataplane::StreamConfig& c) {
  executor_stream(c);
  c.recv_mr = receive_mr_name(q);
  if (q.srq) {
    if (!q.srq_state) throw std::logic_error("QP '" + q.facts->name + "' has an SRQ but no record of it");
    const auto& ss = *q.srq_state;
    c.recv_slot_size = ss.slot_size;
    c.recv_slots = ss.slot_count;
  } else {
    c.recv_slot_size = q.slot_size;
    c.recv_slots = q.slot_count - 1;  // the last slot is the send buffer
  }
  c.rx_depth = std::max(1u, bringup_outstanding(q));
}

void post_bringup_receives(QpState& q, uint32_t count) {
  if (!q.slots || q.slot_count < 2 || count == 0) return;
  auto e = receive_endpoint(q.facts->name, q.qp->get(), nullptr);
  auto pool = pool_of(q);
  pool->layout(e, local_of(q.slots), 0, q.slot_size, q.slot_count - 1);  // the last slot sends
  pool->fill(e, pool->outstanding() + std::min(count, q.slot_count - 1));
}

void post_srq_bringup_receives(RunState& st, plan::ObjectId srq, const std::string& name, uint32_t count) {
  auto& ss = st.srqs.at(srq);
  if (!ss.slots || count == 0) return;
  auto e = receive_endpoint(name, nullptr, ss.srq->get());
  if (!ss.recv_pool) ss.recv_pool = std::make_shared<dataplane::RecvPool>();  // before any QP on it asks pool_of
  ss.recv_pool->layout(e, local_of(ss.slots), 0, ss.slot_size, ss.slot_count);
  ss.recv_pool->fill(e, ss.recv_pool->outstanding() + std::min(count, ss.slot_count));
}

namespace {

int owner_in_router(const QpState& of, Reader r) { return static_cast<int>(of.ordinal) * 2 + (r == Reader::Receives ? 1 : 0); }

void assign_readers(RunState& st, const QpState& q, int sends, int receives) {
  uint32_t qpn = q.qp->get()->qp_num;
  if (q.send_cq) st.router.assign(q.send_cq, qpn, sends);
  if (q.recv_cq) {
    st.router.assign(q.recv_cq, qpn, sends);
    st.router.assign_receives(q.recv_cq, qpn, receives);
  }
}

}  // namespace

dataplane::CqAccess access_for(RunState& st, const QpState& q, Reader reader) {
  // Every QP that exists by now is routed, not only this one: a CQ is shared the moment two
  // readers complete on it, whichever of them is read first. Each QP is assigned once.
  if (!q.routed)
    st.qps.for_each([&](plan::QpId, QpState& other) {
      if (other.routed || !other.qp || !other.qp->holds()) return;
      assign_readers(st, other, owner_in_router(other, Reader::Sends), owner_in_router(other, Reader::Receives));
      other.routed = true;
    });
  return {&st.router, owner_in_router(q, reader)};
}

void route_to(RunState& st, const QpState& q, int owner) {
  access_for(st, q);  // routed first, so that a later access_for leaves this alone
  assign_readers(st, q, owner, owner);
}

void route_home(RunState& st, const QpState& q) {
  assign_readers(st, q, owner_in_router(q, Reader::Sends), owner_in_router(q, Reader::Receives));
}

std::vector<ibv_wc> drain_completions(RunState& st, const QpState& q, ibv_cq* cq, int settle_ms) {
  dataplane::CqHandle sends(cq, access_for(st, q, Reader::Sends));
  dataplane::CqHandle receives(cq, access_for(st, q, Reader::Receives));
  uint32_t qpn = q.qp->get()->qp_num;
  std::vector<ibv_wc> mine;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(settle_ms);
  for (;;) {
    ibv_wc wcs[16];
    int n = 0;
    for (const auto* h : {&sends, &receives}) {
      int k = h->poll(16, wcs);
      for (int i = 0; i < k; ++i)
        if (wcs[i].qp_num == qpn) mine.push_back(wcs[i]);  // a direct poll may see another QP's: gone with it
      n += std::max(k, 0);
    }
    if (n > 0) continue;
    if (std::chrono::steady_clock::now() >= deadline) return mine;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace qpo::exec
