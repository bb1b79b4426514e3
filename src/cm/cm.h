#pragma once
// RAII over librdmacm: an event channel, the connection identifiers on it, and its events.
// The only place besides src/verbs that sees a verbs header (rdma_cma.h includes verbs.h).
//
// Ownership: ids must be destroyed before their channel (librdmacm refuses otherwise), and an
// event must be acknowledged before its id can be destroyed. next_event() copies what it needs
// and acknowledges at once, so an Event holds no librdmacm memory; declare the channel before
// the ids so they go first.
#include <rdma/rdma_cma.h>

#include <optional>
#include <string>
#include <vector>

namespace qpo::cm {

// "RDMA_CM_EVENT_ESTABLISHED" for an event type: librdmacm's own table (rdma_event_str).
std::string event_name(rdma_cm_event_type type);

class EventChannel {
 public:
  // Throws verbs::VerbsError("rdma_create_event_channel", object, errno).
  explicit EventChannel(const std::string& object);
  ~EventChannel();
  EventChannel(const EventChannel&) = delete;
  EventChannel& operator=(const EventChannel&) = delete;
  rdma_event_channel* get() const { return ch_; }

 private:
  rdma_event_channel* ch_ = nullptr;
};

class Id {
 public:
  Id() = default;
  // rdma_create_id on `channel` (RDMA_PS_TCP for RC, RDMA_PS_UDP for UD); throws VerbsError.
  Id(EventChannel& channel, rdma_port_space ps, const std::string& object);
  // An id of another QP type than rdma_create_id gives (it makes RC ids for RDMA_PS_TCP and
  // RDMA_PS_IB, and the kernel's ucma takes a caller's qp_type only for RDMA_PS_IB): a UC id is
  // rdma_create_ep with a RAI_PASSIVE rdma_addrinfo {RDMA_PS_IB, IBV_QPT_UC, `bind`}, which
  // creates the id (librdmacm's rdma_create_id2) and only binds it, then rdma_migrate_id onto
  // `channel`, so its resolves, connect and listen report events there like any other id.
  // Throws VerbsError naming rdma_create_ep or rdma_migrate_id.
  static Id endpoint(EventChannel& channel, rdma_port_space ps, ibv_qp_type qp_type, const sockaddr_storage& bind,
                     const std::string& object);
  // Takes an id librdmacm made (a connect request's).
  Id(rdma_cm_id* adopted, std::string object) : id_(adopted), object_(std::move(object)) {}
  ~Id();
  Id(Id&& o) noexcept : id_(o.id_), object_(std::move(o.object_)) { o.id_ = nullptr; }
  Id& operator=(Id&& o) noexcept;
  Id(const Id&) = delete;
  Id& operator=(const Id&) = delete;
  rdma_cm_id* get() const { return id_; }
  explicit operator bool() const { return id_ != nullptr; }
  const std::string& object() const { return object_; }
  // rdma_destroy_id now; returns its errno (0 ok). Idempotent.
  int release();

 private:
  rdma_cm_id* id_ = nullptr;
  std::string object_;
};

// One event, copied out of librdmacm and acknowledged.
struct Event {
  rdma_cm_event_type type = RDMA_CM_EVENT_ADDR_ERROR;
  int status = 0;                  // the event's status (a reject reason for REJECTED, -errno for errors)
  rdma_cm_id* id = nullptr;        // the id it concerns (for CONNECT_REQUEST: the new one, to adopt)
  rdma_cm_id* listen_id = nullptr; // CONNECT_REQUEST: the listening id it came to
  std::vector<unsigned char> private_data;
  uint8_t responder_resources = 0, initiator_depth = 0;  // CONNECT_REQUEST / RESPONSE
  uint32_t qp_num = 0;             // the peer's QP number where the event carries one
  // RDMA_PS_UDP ids: ESTABLISHED carries how to reach the peer's UD QP.
  bool ud = false;
  ibv_ah_attr ah_attr{};
  uint32_t qkey = 0;
  std::string name() const { return event_name(type); }
};

// Waits at most `timeout_ms` for the next event. nullopt on timeout (*err = ETIMEDOUT) or
// failure (*err = errno).
std::optional<Event> next_event(EventChannel& channel, int timeout_ms, int* err);

// "10.0.1.2" or "fd00:1::2" (an IPv4 or IPv6 literal) with a port; false when `ip` is neither.
bool make_sockaddr(const std::string& ip, uint16_t port, sockaddr_storage* out);
// The address a connect request came from (rdma_get_peer_addr), "10.0.1.1" or "fd00:1::1";
// "an unknown address" when the id has none of either family.
std::string peer_address(rdma_cm_id* id);
// The RoCEv2 GID of the address a request came from (a RoCEv2 GID is the IP address, an IPv4
// one mapped: ::ffff:a.b.c.d); false when the id has no IPv4 or IPv6 peer address.
bool peer_gid(rdma_cm_id* id, uint8_t gid[16]);
// The wildcard address of `ip`'s family: "0.0.0.0" for an IPv4 literal, "::" otherwise.
std::string wildcard_of(const std::string& ip);

}  // namespace qpo::cm
