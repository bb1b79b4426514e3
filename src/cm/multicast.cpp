#include "cm/multicast.h"

#include <arpa/inet.h>

#include <cerrno>
#include <cstring>

#include "verbs/multicast.h"
#include "verbs/verbs_error.h"

namespace qpo::cm {

McastJoin::McastJoin(rdma_cm_id* id, const sockaddr_storage& group, bool send_only, const std::string& object)
    : group_(group) {
  rdma_cm_join_mc_attr_ex attr{};
  attr.comp_mask = RDMA_CM_JOIN_MC_ATTR_ADDRESS | RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS;
  attr.join_flags = send_only ? RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER : RDMA_MC_JOIN_FLAG_FULLMEMBER;
  attr.addr = reinterpret_cast<sockaddr*>(&group_);
  if (rdma_join_multicast_ex(id, &attr, nullptr) != 0)
    throw verbs::VerbsError("rdma_join_multicast", object, errno, send_only ? "send-only full member" : "full member");
  id_ = id;
}

int McastJoin::leave() {
  if (!id_) return 0;
  if (rdma_leave_multicast(id_, reinterpret_cast<sockaddr*>(&group_)) != 0) return errno ? errno : EINVAL;
  id_ = nullptr;
  return 0;
}

std::string gid_address(const ibv_gid& gid) {
  char text[INET6_ADDRSTRLEN] = {};
  if (verbs::gid_is_ipv4(gid))
    inet_ntop(AF_INET, gid.raw + 12, text, sizeof text);
  else
    inet_ntop(AF_INET6, gid.raw, text, sizeof text);
  return text;
}

}  // namespace qpo::cm
