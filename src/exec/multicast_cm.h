#pragma once
// Multicast groups joined through rdma_cm (`join: rdma_cm`): this host's event channel
// (CmMcastChannel) and, per member and sender, an id bound to its device's IP address that
// joins the group (CmJoinMcast: rdma_join_multicast, a sender as send-only full member) and
// waits for RDMA_CM_EVENT_MULTICAST_JOIN. The event's AH attributes and qkey are what the
// member's AttachMcast (GID, MLID) and the sender's CreateMcastAh use; its qkey must be the
// group's. rdma_leave_multicast, rdma_destroy_id and the channel are teardown's Destroy steps.
#include <infiniband/verbs.h>

#include <map>
#include <string>

#include "exec/executor.h"
#include "exec/run_state.h"
#include "plan/plan.h"

namespace qpo::exec {

class ChannelResource;

struct McastCm {
  ChannelResource* channel = nullptr;
  struct Joined {
    ibv_ah_attr ah{};
    uint32_t qkey = 0;
  };
  std::map<std::pair<int, plan::QpId>, Joined> joined;  // by group (Plan::mcast_groups index) and QP id
};

bool cm_mcast_channel(RunState& st, report::RunReport& log, const plan::Step& step);                       // CmMcastChannel
bool cm_join_mcast(RunState& st, report::RunReport& log, const RunOptions& o, const plan::Step& step);     // CmJoinMcast
// What QP `qp`'s join to group `group` (its Plan::mcast_groups index) said (nullptr when it
// did not join through rdma_cm).
const McastCm::Joined* cm_joined(const RunState& st, int group, plan::QpId qp);

}  // namespace qpo::exec
