#include "exec/multicast_cm.h"

#include <cerrno>
#include <chrono>
#include <stdexcept>

#include "cm/flow.h"
#include "exec/cm_resources.h"
#include "exec/failure_note.h"
#include "exec/steps.h"
#include "util/strings.h"
#include "verbs/device.h"
#include "verbs/multicast.h"

namespace qpo::exec {

namespace {

constexpr int kEnotsupp = 524;  // the kernel's ENOTSUPP (not ENOTSUP), as rdma_cm returns it

// The step's line says "unsupported by device (...)" and the run's verdict becomes Unsupported.
bool unsupported(RunState& st, report::RunReport& log, report::StepResult& r, const std::string& why) {
  std::string reason = "unsupported by device (" + provider_of(st) + "): " + why;
  r.status = report::StepStatus::Skipped;
  r.message = reason;
  if (log.verdict == report::Verdict::Pass) {
    log.verdict = report::Verdict::Unsupported;
    log.reason = reason;
  }
  return false;
}

// The MULTICAST_JOIN event of `id`, within the phase timeout (other ids' events are dropped:
// the joins run one at a time, each waits for its own).
cm::Event await_join(const RunState& st, McastCm& m, rdma_cm_id* id, int timeout_ms, const std::string& object) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) throw cm::Unexpected(object, "RDMA_CM_EVENT_MULTICAST_JOIN", std::nullopt, ETIMEDOUT);
    if (stop_now(st)) throw std::runtime_error(stopped_while_waiting("RDMA_CM_EVENT_MULTICAST_JOIN"));
    int err = 0;
    auto e = cm::next_event(m.channel->channel(), static_cast<int>(std::min<long long>(left, 200)), &err);
    if (!e) {
      if (err == ETIMEDOUT) continue;
      throw cm::Unexpected(object, "RDMA_CM_EVENT_MULTICAST_JOIN", std::nullopt, err);
    }
    if (e->id != id) continue;
    if (e->type != RDMA_CM_EVENT_MULTICAST_JOIN) throw cm::Unexpected(object, "RDMA_CM_EVENT_MULTICAST_JOIN", *e, 0);
    return *e;
  }
}

}  // namespace

bool cm_mcast_channel(RunState& st, report::RunReport& log, const plan::Step& step) {
  auto& r = run_step(log, st.host, "traffic", step.verb, step.object, "", [&] {
    if (!st.mcast_cm) st.mcast_cm = std::make_shared<McastCm>();
    st.mcast_cm->channel = st.own<ChannelResource>(step.object);
  });
  return r.status != report::StepStatus::Failed;
}

bool cm_join_mcast(RunState& st, report::RunReport& log, const RunOptions& o, const plan::Step& step) {
  if (!st.mcast_cm || !st.mcast_cm->channel) {
    log.fail("internal error: rdma_join_multicast step " + std::to_string(step.index) + " before its event channel");
    return false;
  }
  const auto* g = st.plan->mcast_group_at(step.extra().mcast);
  if (!g) throw std::logic_error("a step names multicast group #" + std::to_string(step.extra().mcast) + ", which the plan does not lower");
  bool send_only = !step.extra().smoke.sender.empty();
  const std::string& qp_name = send_only ? step.extra().smoke.sender : step.extra().smoke.receiver;
  std::string why_not, message;
  auto& r = run_step(log, st.host, "traffic", step.verb, step.object, send_only ? "send-only" : "", [&] {
    auto& q = st.qp_here(send_only ? step.extra().smoke.sender_id : step.extra().smoke.receiver_id);
    auto* id = st.own<IdResource>(step.object, cm::Id(st.mcast_cm->channel->channel(), RDMA_PS_UDP, step.object));
    std::string ip = cm::gid_address(q.device->gid);
    sockaddr_storage local, group;
    cm::make_sockaddr(ip, 0, &local);
    cm::make_sockaddr(g->ipv4 ? cm::gid_address(*reinterpret_cast<const ibv_gid*>(g->gid)) : g->gid_text, 0, &group);
    if (rdma_bind_addr(id->get(), reinterpret_cast<sockaddr*>(&local)) != 0)
      throw verbs::VerbsError("rdma_bind_addr", step.object, errno, ip);
    if (!id->get()->verbs) {
      why_not = "rdma_cm multicast: rdma_bind_addr(" + ip + ") found no RDMA device behind the address (" +
                q.device->ctx().device_name() + " is on a loopback netdev, which rdma_cm does not bind; it needs a device "
                "on a real netdev: run the hosts in the two lab guests, without --local)";
      return;
    }
    std::string theirs = ibv_get_device_name(id->get()->verbs->device);
    if (theirs != q.device->ctx().device_name())
      throw std::runtime_error("rdma_cm bound " + ip + " to device " + theirs + ", but QP '" + qp_name + "' is on " +
                               q.device->ctx().device_name());
    try {
      st.own<McastJoinResource>(step.object, id->get(), group, send_only, step.object);
    } catch (const verbs::VerbsError& e) {
      if (e.error() != kEnotsupp || g->ipv4) throw;
      why_not = "rdma_join_multicast of IPv6 group '" + g->name + "' (" + g->gid_text +
                ") on RoCEv2: ENOTSUPP (Linux's rdma_cm joins only IPv4 groups on RoCEv2; `join: verbs` works)";
      return;
    }
    int wait = o.phase_timeout_ms > 0 ? o.phase_timeout_ms : 120000;
    auto e = await_join(st, *st.mcast_cm, id->get(), wait, step.object);
    if (e.qkey != g->qkey)
      throw std::runtime_error("the CM's group has qkey " + util::hex(e.qkey) + ", the scenario's group '" + g->name +
                               "' " + util::hex(g->qkey));
    st.mcast_cm->joined[{step.extra().mcast, q.id}] = McastCm::Joined{e.ah_attr, e.qkey};
    message = "RDMA_CM_EVENT_MULTICAST_JOIN: dgid " + verbs::gid_text(e.ah_attr.grh.dgid) + ", dlid " +
              util::hex(e.ah_attr.dlid) + ", qkey " + util::hex(e.qkey) + ", sgid_index " +
              std::to_string(e.ah_attr.grh.sgid_index) + " (bound to " + ip + ")";
  });
  if (!why_not.empty()) return unsupported(st, log, r, why_not);
  if (r.status == report::StepStatus::Ok) r.message = message;
  return r.status != report::StepStatus::Failed;
}

const McastCm::Joined* cm_joined(const RunState& st, int group, plan::QpId qp) {
  if (!st.mcast_cm) return nullptr;
  auto it = st.mcast_cm->joined.find({group, qp});
  return it == st.mcast_cm->joined.end() ? nullptr : &it->second;
}

}  // namespace qpo::exec
