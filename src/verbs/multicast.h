#pragma once
// A UD QP's attachment to a multicast group (ibv_attach_mcast / ibv_detach_mcast), detached
// before the QP is destroyed (teardown's reverse order; an attached QP holds the group).
//
// On RoCEv2 a group's datagrams are UDP/IP multicast: the kernel delivers them to the RDMA
// device only when its netdev has joined the group's IP address. rdma_cm joins it for RoCEv2
// (cma_igmp_send); rxe's attach in Linux 6.1 only adds the link-layer address, so without a
// join nothing arrives. With `netdev` given, the attachment also joins the group's IP address
// on that netdev (IP_ADD_MEMBERSHIP / IPV6_ADD_MEMBERSHIP on a socket it keeps) and leaves it
// when it detaches.
#include <infiniband/verbs.h>

#include <cstdint>
#include <string>

#include "verbs/resources.h"

namespace qpo::verbs {

class McastAttachment : public Resource {
 public:
  // Throws VerbsError("ibv_attach_mcast") or, for the join, VerbsError("setsockopt").
  McastAttachment(std::string name, ibv_qp* qp, const ibv_gid& gid, uint16_t mlid, const std::string& netdev);
  ~McastAttachment() override { release(); }
  const char* destroy_verb() const override { return "ibv_detach_mcast"; }
  int release() override;
  // "239.1.1.1 on lo" when the IP group was joined, else "".
  const std::string& ip_join() const { return joined_; }

 private:
  ibv_qp* qp_ = nullptr;
  ibv_gid gid_{};
  uint16_t mlid_ = 0;
  int socket_ = -1;
  std::string joined_;
};

// True when `gid` is IPv4-mapped (::ffff:a.b.c.d): RoCEv2 sends it as an IPv4 packet.
bool gid_is_ipv4(const ibv_gid& gid);

}  // namespace qpo::verbs
