#include "exec/multicast.h"

#include <cstring>
#include <fstream>
#include <map>
#include <stdexcept>

#include "exec/device_counters.h"
#include "exec/multicast_cm.h"
#include "exec/steps.h"
#include "util/strings.h"
#include "verbs/multicast.h"

namespace qpo::exec {

namespace {

ibv_gid gid_of(const plan::McastGroup& g) {
  ibv_gid gid;
  std::memcpy(gid.raw, g.gid, sizeof gid.raw);
  return gid;
}

const plan::McastGroup& group_of(const RunState& st, int index) {
  const auto* g = st.plan->mcast_group_at(index);
  if (!g) throw std::logic_error("a step names multicast group #" + std::to_string(index) + ", which the plan does not lower");
  return *g;
}

bool roce(const DeviceState& d) { return d.ctx().port_attr().link_layer == IBV_LINK_LAYER_ETHERNET; }

// IFF_MULTICAST (0x1000) in /sys/class/net/NETDEV/flags.
bool netdev_multicast(const std::string& netdev) {
  std::ifstream in("/sys/class/net/" + netdev + "/flags");
  std::string text;
  if (!(in >> text)) return true;  // not known: let the device say
  return (std::stoul(text, nullptr, 16) & 0x1000) != 0;
}

}  // namespace

bool attach_mcast(RunState& st, report::RunReport& log, const plan::Step& step) {
  const auto& g = group_of(st, step.extra().mcast);
  const std::string& member = step.extra().smoke.receiver;
  std::string joined;
  const auto* cm = g.cm_join ? cm_joined(st, step.extra().mcast, step.extra().smoke.receiver_id) : nullptr;
  if (g.cm_join && !cm) throw std::logic_error("AttachMcast of '" + step.object + "' before its rdma_cm join");
  uint16_t mlid = cm ? cm->ah.dlid : static_cast<uint16_t>(g.mlid);
  auto& r = run_step(log, st.host, "traffic", step.verb, step.object, "QP " + member + " to " + g.gid_text, [&] {
    auto& q = st.qp_here(step.extra().smoke.receiver_id);
    // The CM joined the IP group itself; the verbs way joins it here.
    std::string netdev = roce(*q.device) && !cm ? netdev_of(*q.device) : "";
    auto* a = st.own<verbs::McastAttachment>(step.object, q.qp->get(), cm ? cm->ah.grh.dgid : gid_of(g), mlid, netdev);
    joined = a->ip_join();
  });
  if (r.status == report::StepStatus::Ok)
    r.message = "mlid " + util::hex(mlid) + (joined.empty() ? "" : "; IP group " + joined + " joined") +
                (cm ? "; GID and MLID from the CM's join" : "");
  return r.status != report::StepStatus::Failed;
}

ibv_ah* mcast_ah(RunState& st, QpState& from, const plan::McastGroup& g) {
  auto group = static_cast<plan::ObjectId>(&g - st.plan->mcast_groups.data());  // g is the plan's
  auto& made_for = st.mcast_ahs[{from.id, group}];
  if (made_for) return made_for->get();
  std::string name = "qpo.ah." + from.facts->name + "->" + g.name;
  ibv_gid dgid = gid_of(g);
  if (roce(*from.device) && verbs::gid_is_ipv4(dgid) != verbs::gid_is_ipv4(from.device->gid))
    throw std::runtime_error("multicast group '" + g.name + "' (" + g.gid_text + ") is " +
                             (verbs::gid_is_ipv4(dgid) ? "IPv4" : "IPv6") + ", the source GID " +
                             verbs::gid_text(from.device->gid) + " (gid_index " + std::to_string(from.device->gid_index) +
                             ") is not: RoCEv2 sends one IP packet, both addresses of one family (set the device's gid_index)");
  if (const auto* cm = g.cm_join ? cm_joined(st, static_cast<int>(group), from.id) : nullptr) {  // the CM's attributes
    ibv_ah_attr ah = cm->ah;
    made_for = st.own<verbs::Ah>(name, from.pd, ah);
    return made_for->get();
  }
  ibv_ah_attr ah{};
  ah.port_num = from.device->ctx().port();
  ah.dlid = static_cast<uint16_t>(g.mlid);
  ah.is_global = 1;
  ah.grh.dgid = dgid;
  ah.grh.sgid_index = static_cast<uint8_t>(from.device->gid_index);
  ah.grh.hop_limit = 1;
  made_for = st.own<verbs::Ah>(name, from.pd, ah);
  return made_for->get();
}

bool create_mcast_ah(RunState& st, report::RunReport& log, const plan::Step& step) {
  const auto& g = group_of(st, step.extra().mcast);
  auto& r = run_step(log, st.host, "traffic", step.verb, step.object, "", [&] { mcast_ah(st, st.qp_here(step.extra().smoke.sender_id), g); });
  if (r.status == report::StepStatus::Ok)
    r.message = g.cm_join ? "the CM's AH attributes (MULTICAST_JOIN)" : "dgid " + g.gid_text + ", dlid " + util::hex(g.mlid);
  return r.status != report::StepStatus::Failed;
}

std::string mcast_unsupported(const RunState& st, const plan::DeviceNeeds& needs) {
  for (const auto& [device, count] : needs.mcast_attachments) {
    const DeviceState* here = st.devices.find(device);
    if (!here) continue;  // another host's
    const DeviceState& d = *here;
    std::string who = "unsupported by device (" + d.ctx().provider() + ", " + d.ctx().device_name() + "): ";
    const auto& attr = d.ctx().device_attr();
    if (attr.max_mcast_grp == 0 || attr.max_mcast_qp_attach == 0)
      return who + "mcast: no multicast groups (max_mcast_grp " + std::to_string(attr.max_mcast_grp) + ")";
    if (count > static_cast<uint64_t>(attr.max_total_mcast_qp_attach))
      return who + "mcast: " + std::to_string(count) + " attachments, max_total_mcast_qp_attach " +
             std::to_string(attr.max_total_mcast_qp_attach);
  }
  for (const auto& send : needs.ipv6_mcast_sends) {
    const DeviceState* here = st.devices.find(send.device_id);
    if (!here || !roce(*here)) continue;
    const DeviceState& d = *here;
    std::string netdev = netdev_of(d);
    if (!netdev.empty() && !netdev_multicast(netdev))
      return "unsupported by device (" + d.ctx().provider() + ", " + d.ctx().device_name() + "): mcast: IPv6 group '" +
             send.group + "' (" + send.gid_text + ") sent from netdev " + netdev +
             ", which has no IFF_MULTICAST: the kernel has no route for it (rxe completes the send with "
             "IBV_WC_LOC_QP_OP_ERR); IPv4 groups (239.x.x.x) work there";
  }
  return "";
}

}  // namespace qpo::exec
