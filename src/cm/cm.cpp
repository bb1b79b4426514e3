#include "cm/cm.h"

#include <arpa/inet.h>
#include <poll.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "verbs/verbs_error.h"

namespace qpo::cm {

std::string event_name(rdma_cm_event_type type) {
  const char* s = rdma_event_str(type);
  return s ? s : "UNKNOWN EVENT";
}

EventChannel::EventChannel(const std::string& object) {
  ch_ = rdma_create_event_channel();
  if (!ch_) throw verbs::VerbsError("rdma_create_event_channel", object, errno ? errno : ENODEV);
}

EventChannel::~EventChannel() {
  if (ch_) rdma_destroy_event_channel(ch_);
}

Id::Id(EventChannel& channel, rdma_port_space ps, const std::string& object) : object_(object) {
  if (rdma_create_id(channel.get(), &id_, nullptr, ps) != 0) {
    id_ = nullptr;
    throw verbs::VerbsError("rdma_create_id", object, errno);
  }
}

Id Id::endpoint(EventChannel& channel, rdma_port_space ps, ibv_qp_type qp_type, const sockaddr_storage& bind,
                const std::string& object) {
  sockaddr_storage src = bind;
  rdma_addrinfo res{};
  res.ai_flags = RAI_PASSIVE;
  res.ai_family = src.ss_family;
  res.ai_qp_type = qp_type;
  res.ai_port_space = ps;
  res.ai_src_addr = reinterpret_cast<sockaddr*>(&src);
  res.ai_src_len = src.ss_family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
  rdma_cm_id* raw = nullptr;
  if (rdma_create_ep(&raw, &res, nullptr, nullptr) != 0) throw verbs::VerbsError("rdma_create_ep", object, errno);
  if (rdma_migrate_id(raw, channel.get()) != 0) {
    int e = errno;
    rdma_destroy_ep(raw);
    throw verbs::VerbsError("rdma_migrate_id", object, e);
  }
  return Id(raw, object);
}

Id::~Id() { release(); }

Id& Id::operator=(Id&& o) noexcept {
  if (this != &o) {
    release();
    id_ = o.id_;
    object_ = std::move(o.object_);
    o.id_ = nullptr;
  }
  return *this;
}

int Id::release() {
  if (!id_) return 0;
  int e = rdma_destroy_id(id_) == 0 ? 0 : errno;
  id_ = nullptr;
  return e;
}

std::optional<Event> next_event(EventChannel& channel, int timeout_ms, int* err) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left < 0) left = 0;
    pollfd p{channel.get()->fd, POLLIN, 0};
    int r = ::poll(&p, 1, static_cast<int>(left));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      *err = errno;
      return std::nullopt;
    }
    if (r == 0) {
      *err = ETIMEDOUT;
      return std::nullopt;
    }
    break;
  }
  rdma_cm_event* raw = nullptr;
  if (rdma_get_cm_event(channel.get(), &raw) != 0) {
    *err = errno;
    return std::nullopt;
  }
  Event e;
  e.type = raw->event;
  e.status = raw->status;
  e.id = raw->id;
  e.listen_id = raw->listen_id;
  // `param` is a union: UD ids' events carry rdma_ud_param, the others rdma_conn_param (both
  // begin with the private data).
  e.ud = raw->id && (raw->id->ps == RDMA_PS_UDP || raw->id->ps == RDMA_PS_IPOIB);
  const auto& conn = raw->param.conn;
  if (conn.private_data && conn.private_data_len) {
    const auto* b = static_cast<const unsigned char*>(conn.private_data);
    e.private_data.assign(b, b + conn.private_data_len);
  }
  if (e.ud) {
    e.ah_attr = raw->param.ud.ah_attr;
    e.qp_num = raw->param.ud.qp_num;
    e.qkey = raw->param.ud.qkey;
  } else {
    e.responder_resources = conn.responder_resources;
    e.initiator_depth = conn.initiator_depth;
    e.qp_num = conn.qp_num;
  }
  rdma_ack_cm_event(raw);
  *err = 0;
  return e;
}

bool make_sockaddr(const std::string& ip, uint16_t port, sockaddr_storage* out) {
  std::memset(out, 0, sizeof *out);
  auto* v4 = reinterpret_cast<sockaddr_in*>(out);
  if (inet_pton(AF_INET, ip.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(port);
    return true;
  }
  auto* v6 = reinterpret_cast<sockaddr_in6*>(out);
  if (inet_pton(AF_INET6, ip.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(port);
    return true;
  }
  return false;
}

std::string peer_address(rdma_cm_id* id) {
  const sockaddr* sa = id ? rdma_get_peer_addr(id) : nullptr;
  char buf[INET6_ADDRSTRLEN] = {};
  if (sa && sa->sa_family == AF_INET &&
      inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(sa)->sin_addr, buf, sizeof buf))
    return buf;
  if (sa && sa->sa_family == AF_INET6 &&
      inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(sa)->sin6_addr, buf, sizeof buf))
    return buf;
  return "an unknown address";
}

bool peer_gid(rdma_cm_id* id, uint8_t gid[16]) {
  const sockaddr* sa = id ? rdma_get_peer_addr(id) : nullptr;
  if (sa && sa->sa_family == AF_INET) {
    std::memset(gid, 0, 16);
    gid[10] = gid[11] = 0xff;
    std::memcpy(gid + 12, &reinterpret_cast<const sockaddr_in*>(sa)->sin_addr, 4);
    return true;
  }
  if (sa && sa->sa_family == AF_INET6) {
    std::memcpy(gid, &reinterpret_cast<const sockaddr_in6*>(sa)->sin6_addr, 16);
    return true;
  }
  return false;
}

std::string wildcard_of(const std::string& ip) {
  in_addr v4;
  return inet_pton(AF_INET, ip.c_str(), &v4) == 1 ? "0.0.0.0" : "::";
}

}  // namespace qpo::cm
