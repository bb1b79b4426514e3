#include "exec/script_endpoints.h"

#include <algorithm>
#include <memory>

#include "dataplane/recv_pool.h"

#include "scenario/script_qps.h"
#include "exec/async_events.h"
#include "exec/steps.h"

namespace qpo::exec {

namespace {

ibv_comp_channel* channel_of(const RunState& st, const scenario::Ref& cq) {
  auto it = st.channels.find(cq.name);
  return it == st.channels.end() ? nullptr : it->second->get();
}

// Whom `qp` talks to in this workload: its connect:, else an initiator connected to it.
std::string peer_in(const RunState& st, const scenario::Workload& w, const std::string& qp) {
  const auto* q = st.scenario->qp(qp);
  if (q && q->connect) return q->connect.name;
  for (const auto& ref : w.initiators()) {
    const auto* i = st.scenario->qp(ref.name);
    if (i && i->connect.name == qp) return ref.name;
  }
  return "";
}

// The pool a script workload posts receives through: the SRQ's when the QP has one (QPs on
// one SRQ share it), else the QP's own. Both live in RunState, so a second script workload on
// a QP sees what the first left posted, and nothing outlives the run's MRs.
std::shared_ptr<dataplane::RecvPool> pool_of(RunState& st, QpState& q) {
  std::shared_ptr<dataplane::RecvPool>* slot = &q.recv_pool;
  if (q.srq)
    if (auto it = st.srqs.find(q.spec->srq.name); it != st.srqs.end()) slot = &it->second.recv_pool;
  if (!*slot) *slot = std::make_shared<dataplane::RecvPool>();
  return *slot;
}

dataplane::Endpoint endpoint_for(RunState& st, QpState& q, const std::string& peer) {
  dataplane::Endpoint e;
  e.qp_name = q.spec->name;
  e.qp_type = q.spec->type_name;
  e.qp = q.qp->get();
  e.qpx = q.qp->extended();
  e.pd = q.pd;
  e.send_cq = q.send_cq;
  e.recv_cq = q.recv_cq;
  e.send_channel = channel_of(st, q.spec->send_cq);  // event mode (`events = true`)
  e.recv_channel = channel_of(st, q.spec->recv_cq);
  e.srq = q.srq;
  e.max_send_wr = q.spec->cap.max_send_wr;
  // The room the data path has: receives the executor still has posted take the rest.
  e.max_recv_wr = q.spec->cap.max_recv_wr > q.posted_recvs ? q.spec->cap.max_recv_wr - q.posted_recvs : 0;
  e.recv_limited = !q.srq;  // 0 left is "full", not "no limit"
  e.max_inline_data = q.spec->cap.max_inline_data;
  if (auto it = st.dir.qps.find(peer); !peer.empty() && it != st.dir.qps.end()) {
    e.peer_name = peer;
    e.peer_qpn = it->second.qpn;
    e.peer_qkey = it->second.qkey;
    if (e.qp_type == "UD") e.peer_ah = peer_ah(st, q, peer, it->second);
  }
  for (const auto& [name, mr] : st.mrs) {
    const auto* m = st.scenario->mr(name);
    if (m && m->pd.name == q.spec->pd.name) e.local_mrs[name] = {mr->get(), mr->data(), mr->length()};
  }
  for (const auto& [name, r] : st.dir.mrs) e.remote_mrs[name] = {r.addr, r.rkey, r.length};
  e.recv_pool = pool_of(st, q);
  return e;
}

// One empty SEND from `from` to the QP named `to` (here or on another host), its send
// completion awaited.
std::string send_empty(RunState& st, QpState& from, const std::string& to, uint32_t seq, int timeout_ms) {
  const RemoteQp& dest = st.dir.qps.at(to);
  ibv_send_wr wr{};
  wr.wr_id = make_wr_id(WrKind::Smoke, ordinal_of(st, from.spec->name), 0xD0000000u | seq);
  wr.opcode = IBV_WR_SEND;
  wr.send_flags = IBV_SEND_SIGNALED;
  if (from.spec->type_name == "UD") {
    wr.wr.ud.ah = peer_ah(st, from, to, dest);
    wr.wr.ud.remote_qpn = dest.qpn;
    wr.wr.ud.remote_qkey = dest.qkey;
  }
  ibv_send_wr* bad = nullptr;
  if (int e = ibv_post_send(from.qp->get(), &wr, &bad))
    return "ibv_post_send on '" + from.spec->name + "' failed: " + verbs::errno_name(e);
  auto sent = st.completions.wait(from.send_cq, wr.wr_id, timeout_ms);
  if (!sent || sent->status != IBV_WC_SUCCESS)
    return "'" + from.spec->name + "': " +
           (sent ? std::string(wc_status_name(sent->status)) : "no send completion" + describe_async_events(st));
  return "";
}

// One receive of `to` completing (a message its peer sent to clear it).
std::string await_receive(RunState& st, QpState& to, int timeout_ms) {
  uint32_t qpn = to.qp->get()->qp_num;
  auto got = st.completions.wait_if(
      to.recv_cq, [&](const ibv_wc& c) { return c.qp_num == qpn && (c.opcode & IBV_WC_RECV); }, timeout_ms);
  if (!got || got->status != IBV_WC_SUCCESS)
    return "'" + to.spec->name + "': " +
           (got ? std::string(wc_status_name(got->status)) : "no receive completion" + describe_async_events(st));
  return "";
}

}  // namespace

std::string local_endpoints(RunState& st, const scenario::Workload& w, const lua::WorkloadSpec& spec,
                            std::map<std::string, dataplane::Endpoint>& out) {
  for (const auto& worker : spec.workers)
    for (const auto& name : worker.qps) {
      auto it = st.qps.find(name);
      if (it == st.qps.end()) return "QP '" + name + "' is not on host " + st.host;
      out[name] = endpoint_for(st, it->second, peer_in(st, w, name));
    }
  return "";
}

std::string drain_bringup_receives(RunState& st, const scenario::Workload& w, const lua::WorkloadSpec& spec,
                                   int timeout_ms, std::map<std::string, uint32_t>* across_hosts) {
  for (const auto& worker : spec.workers)
    for (const auto& name : worker.qps) {
      auto found = st.qps.find(name);
      if (found == st.qps.end()) continue;  // local_endpoints says so
      auto& q = found->second;
      // Only receive queues the scripts own hold just the smoke's share; others keep theirs.
      // An SRQ keeps its share too: its receives are not counted per QP, and a stream counts
      // a message that lands there (unchecked); a ping-pong does not receive through SRQs.
      if (q.srq || !scenario::receives_belong_to_scripts(*st.scenario, name)) continue;
      uint32_t leftover = q.posted_recvs;
      if (leftover == 0) continue;
      auto peer = st.qps.find(peer_in(st, w, name));
      if (peer == st.qps.end()) {
        // Its peer is on another host: cleared after the hosts compared notes.
        (*across_hosts)[name] = leftover;
        continue;
      }
      for (uint32_t k = 0; k < leftover; ++k) {
        auto problem = send_empty(st, peer->second, name, k, timeout_ms);
        if (problem.empty()) problem = await_receive(st, q, timeout_ms);
        if (!problem.empty()) return "clearing the executor's receives on '" + name + "': " + problem;
      }
      q.posted_recvs = 0;
    }
  return "";
}

std::string clear_receives_across_hosts(RunState& st, const scenario::Workload& w,
                                        const std::map<std::string, uint32_t>& all, int timeout_ms) {
  // Sends first, then receives: every host sends before it waits, so none waits on a host
  // that is itself waiting.
  for (const auto& [name, count] : all) {
    if (st.qps.count(name)) continue;
    auto peer = st.qps.find(peer_in(st, w, name));
    if (peer == st.qps.end()) continue;  // another host's pair
    for (uint32_t k = 0; k < count; ++k)
      if (auto problem = send_empty(st, peer->second, name, k, timeout_ms); !problem.empty())
        return "clearing the executor's receives on '" + name + "' (host " + st.dir.qps.at(name).host + "): " + problem;
  }
  for (const auto& [name, count] : all) {
    auto q = st.qps.find(name);
    if (q == st.qps.end()) continue;
    for (uint32_t k = 0; k < count; ++k)
      if (auto problem = await_receive(st, q->second, timeout_ms); !problem.empty())
        return "clearing the executor's receives on '" + name + "' (its peer is on another host): " + problem;
    q->second.posted_recvs = 0;
  }
  return "";
}

}  // namespace qpo::exec
