#include "verbs/multicast.h"

#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "verbs/verbs_error.h"

namespace qpo::verbs {

bool gid_is_ipv4(const ibv_gid& gid) {
  static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  return std::memcmp(gid.raw, mapped, sizeof mapped) == 0;
}

namespace {

// Joins the group's IP address on `netdev` through a socket; returns it (or throws).
int join_ip_group(const ibv_gid& gid, const std::string& netdev, const std::string& object, std::string* joined) {
  unsigned index = if_nametoindex(netdev.c_str());
  if (!index) throw VerbsError("if_nametoindex", object, errno ? errno : ENODEV, "netdev " + netdev);
  bool v4 = gid_is_ipv4(gid);
  int fd = socket(v4 ? AF_INET : AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw VerbsError("socket", object, errno, "for the IP multicast join");
  char text[INET6_ADDRSTRLEN] = {};
  int rc;
  if (v4) {
    ip_mreqn m{};
    std::memcpy(&m.imr_multiaddr, gid.raw + 12, 4);
    m.imr_ifindex = static_cast<int>(index);
    inet_ntop(AF_INET, gid.raw + 12, text, sizeof text);
    rc = setsockopt(fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &m, sizeof m);
  } else {
    ipv6_mreq m{};
    std::memcpy(&m.ipv6mr_multiaddr, gid.raw, 16);
    m.ipv6mr_interface = index;
    inet_ntop(AF_INET6, gid.raw, text, sizeof text);
    rc = setsockopt(fd, IPPROTO_IPV6, IPV6_ADD_MEMBERSHIP, &m, sizeof m);
  }
  if (rc != 0) {
    int e = errno;
    close(fd);
    throw VerbsError("setsockopt", object, e,
                     std::string(v4 ? "IP_ADD_MEMBERSHIP " : "IPV6_ADD_MEMBERSHIP ") + text + " on " + netdev);
  }
  *joined = std::string(text) + " on " + netdev;
  return fd;
}

}  // namespace

McastAttachment::McastAttachment(std::string name, ibv_qp* qp, const ibv_gid& gid, uint16_t mlid,
                                 const std::string& netdev)
    : Resource(std::move(name)), gid_(gid), mlid_(mlid) {
  errno = 0;
  if (int e = ibv_attach_mcast(qp, &gid_, mlid_))
    throw VerbsError("ibv_attach_mcast", this->name(), verb_errno(e), "mlid " + std::to_string(mlid));
  qp_ = qp;
  if (!netdev.empty()) {
    try {
      socket_ = join_ip_group(gid_, netdev, this->name(), &joined_);
    } catch (...) {
      release();
      throw;
    }
  }
}

int McastAttachment::release() {
  if (socket_ >= 0) {
    close(socket_);  // leaves the IP group
    socket_ = -1;
  }
  if (!qp_) return 0;
  int e = verb_errno(ibv_detach_mcast(qp_, &gid_, mlid_));
  if (e == 0) qp_ = nullptr;
  return e;
}

}  // namespace qpo::verbs
