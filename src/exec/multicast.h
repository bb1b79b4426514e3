#pragma once
// Multicast at run time: the timeline's first stage attaches every group's members
// (verbs::McastAttachment: ibv_attach_mcast, and on RoCE the join of the group's IP address on
// the device's netdev), a sender's address handle to a group, and what the device cannot do.
#include <string>

#include "exec/run_state.h"
#include "plan/plan.h"

namespace qpo::exec {

bool attach_mcast(RunState& st, report::RunReport& log, const plan::Step& step);     // AttachMcast
bool create_mcast_ah(RunState& st, report::RunReport& log, const plan::Step& step);  // CreateMcastAh
// The sender's address handle to `group` (made by its CreateMcastAh step, or now).
ibv_ah* mcast_ah(RunState& st, QpState& from, const plan::McastGroup& g);
// Why this host's devices cannot run the scenario's multicast ("" when they can): an IPv6
// group sent from a device whose netdev has no IFF_MULTICAST (rxe on lo: the send fails with
// IBV_WC_LOC_QP_OP_ERR), a device without multicast groups, more members than it attaches.
std::string mcast_unsupported(const RunState& st, const plan::DeviceNeeds& needs);

}  // namespace qpo::exec
