#pragma once
// A multicast join through rdma_cm (rdma_join_multicast_ex / rdma_leave_multicast) on an id
// bound to a local address. The CM answers with RDMA_CM_EVENT_MULTICAST_JOIN (the group's AH
// attributes, QPN 0xffffff and qkey RDMA_UDP_QKEY); the caller reads it from the channel. On
// RoCEv2 a full member's join also joins the group's IP address on the netdev (the kernel's
// cma_igmp_send); a send-only full member does not, and receives nothing. qpo's QPs are its
// own (no rdma_create_qp), so the caller attaches them itself (ibv_attach_mcast).
#include <rdma/rdma_cma.h>

#include <string>

namespace qpo::cm {

class McastJoin {
 public:
  // Throws verbs::VerbsError("rdma_join_multicast", object, errno).
  McastJoin(rdma_cm_id* id, const sockaddr_storage& group, bool send_only, const std::string& object);
  ~McastJoin() { leave(); }
  McastJoin(const McastJoin&) = delete;
  McastJoin& operator=(const McastJoin&) = delete;
  // rdma_leave_multicast now; its errno (0 ok). Idempotent. Before the id is destroyed.
  int leave();
  bool joined() const { return id_ != nullptr; }

 private:
  rdma_cm_id* id_ = nullptr;
  sockaddr_storage group_{};
};

// The IP address of a RoCE GID, as rdma_bind_addr takes it: ::ffff:10.0.1.1 -> 10.0.1.1.
std::string gid_address(const ibv_gid& gid);

}  // namespace qpo::cm
