#include "cm/perftest_control.h"

#include <poll.h>

#include <cstring>
#include <thread>

#include "cm/peer_check.h"
#include "verbs/verbs_error.h"

namespace qpo::cm {

namespace {

constexpr const char* kObject = "perftest control";
constexpr size_t kUnitMax = 64;  // the largest unit is the keys' 56 bytes
constexpr uint64_t kRecvId = 1, kSendId = 2;

int ms_until(interop::Deadline deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
  return left < 0 ? 0 : static_cast<int>(std::min<long long>(left, 1 << 30));
}

// perftest's control connection: SENDs only, retried without end while the other side has no
// receive posted (its rnr_retry_count 7).
rdma_conn_param control_param() {
  rdma_conn_param p{};
  p.retry_count = 7;
  p.rnr_retry_count = 7;
  return p;
}

std::string endpoint_text(const std::string& ip, uint16_t port) {
  return (ip.find(':') != std::string::npos ? "[" + ip + "]" : ip) + ":" + std::to_string(port);
}

bool post_receive(rdma_cm_id* id, verbs::Mr& buf, std::string* why) {
  ibv_sge sge{reinterpret_cast<uintptr_t>(buf.data()), kUnitMax, buf.get()->lkey};
  ibv_recv_wr wr{};
  wr.wr_id = kRecvId;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  if (int err = ibv_post_recv(id->qp, &wr, &bad)) {
    *why = verbs::VerbsError("ibv_post_recv", kObject, err).what();
    return false;
  }
  return true;
}

}  // namespace

int PerftestControl::wait_completion(ibv_cq* cq, ibv_wc* wc, interop::Deadline deadline, const std::atomic<bool>* stop,
                                     std::string* why) {
  for (unsigned spins = 0;; ++spins) {
    int n = ibv_poll_cq(cq, 1, wc);
    if (n < 0) {
      *why = "ibv_poll_cq failed";
      return -1;
    }
    if (n == 1) return 1;
    if (stop && stop->load(std::memory_order_relaxed)) {
      *why = "stopped";
      return 0;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      *why = "timed out";
      return 0;
    }
    // A tool that exits closes the connection: its DREQ ends the wait now, not at the deadline.
    if (spins % 64 == 0 && closed(why)) return -1;
    std::this_thread::sleep_for(std::chrono::microseconds(100));  // a unit is rare; no need to spin a core
  }
}

bool PerftestControl::closed(std::string* why) {
  pollfd p{channel_->get()->fd, POLLIN, 0};
  if (::poll(&p, 1, 0) <= 0) return false;
  int err = 0;
  auto ev = next_event(*channel_, 0, &err);
  if (!ev) return false;
  if (ev->type != RDMA_CM_EVENT_DISCONNECTED && ev->type != RDMA_CM_EVENT_DEVICE_REMOVAL &&
      ev->type != RDMA_CM_EVENT_TIMEWAIT_EXIT)
    return false;
  *why = remote_ + " closed its control connection (" + ev->name() + ")";
  return true;
}

PerftestControl::~PerftestControl() {
  if (qp_) rdma_destroy_qp(id_.get());  // before the buffer, CQs and PD it uses (members, in reverse)
}

void PerftestControl::make_qp() {
  ibv_context* ctx = id_.get()->verbs;
  pd_ = std::make_unique<verbs::Pd>(kObject, ctx);
  send_cq_ = std::make_unique<verbs::Cq>(kObject, ctx, 4, nullptr);
  recv_cq_ = std::make_unique<verbs::Cq>(kObject, ctx, 4, nullptr);
  buf_ = std::make_unique<verbs::Mr>(kObject, pd_->get(), 2 * kUnitMax, IBV_ACCESS_LOCAL_WRITE);
  ibv_qp_init_attr a{};
  a.send_cq = send_cq_->get();
  a.recv_cq = recv_cq_->get();
  a.qp_type = IBV_QPT_RC;
  a.cap.max_send_wr = 2;
  a.cap.max_recv_wr = 2;
  a.cap.max_send_sge = 1;
  a.cap.max_recv_sge = 1;
  if (rdma_create_qp(id_.get(), pd_->get(), &a)) throw verbs::VerbsError("rdma_create_qp", kObject, errno);
  qp_ = true;
  std::string why;
  if (!post_receive(id_.get(), *buf_, &why)) throw std::runtime_error(why);
}

bool PerftestControl::wait_for(rdma_cm_event_type want, interop::Deadline deadline, std::string* why,
                               std::optional<rdma_cm_event_type>* got) {
  int err = 0;
  auto ev = next_event(*channel_, ms_until(deadline), &err);
  if (!ev) {
    *why = err == ETIMEDOUT ? "no " + event_name(want) + " before the deadline" : "rdma_get_cm_event: " + std::string(strerror(err));
    return false;
  }
  if (got) *got = ev->type;
  if (ev->type == want) return true;
  *why = ev->name() + " (status " + std::to_string(ev->status) + "), not " + event_name(want);
  return false;
}

std::unique_ptr<PerftestControl> PerftestControl::dial(const std::string& ip, uint16_t port, interop::Deadline deadline,
                                                       std::string* why) {
  sockaddr_storage dst{};
  if (!make_sockaddr(ip, port, &dst)) {
    *why = "'" + ip + "' is not an IP address (perftest -R's control connection goes through rdma_cm)";
    return nullptr;
  }
  std::string where = endpoint_text(ip, port), last;
  for (int tries = 1;; ++tries) {
    try {
      auto channel = std::make_unique<EventChannel>(kObject);
      Id id(*channel, RDMA_PS_TCP, kObject);
      std::unique_ptr<PerftestControl> c(new PerftestControl(std::move(channel), std::move(id), where));
      // Until the deadline, any failure of a try that a tool not up yet explains is tried again:
      // nothing listens (REJECTED), or the peer's address does not answer yet.
      std::optional<rdma_cm_event_type> got;
      auto again = [&] {
        return got && (*got == RDMA_CM_EVENT_REJECTED || *got == RDMA_CM_EVENT_UNREACHABLE || *got == RDMA_CM_EVENT_ADDR_ERROR ||
                       *got == RDMA_CM_EVENT_ROUTE_ERROR || *got == RDMA_CM_EVENT_CONNECT_ERROR);
      };
      bool connected = false;
      if (rdma_resolve_addr(c->id_.get(), nullptr, reinterpret_cast<sockaddr*>(&dst), 2000))
        throw verbs::VerbsError("rdma_resolve_addr", kObject, errno);
      if (c->wait_for(RDMA_CM_EVENT_ADDR_RESOLVED, deadline, &last, &got)) {
        if (rdma_resolve_route(c->id_.get(), 2000)) throw verbs::VerbsError("rdma_resolve_route", kObject, errno);
        if (c->wait_for(RDMA_CM_EVENT_ROUTE_RESOLVED, deadline, &last, &got)) {
          c->make_qp();
          rdma_conn_param p = control_param();
          if (rdma_connect(c->id_.get(), &p)) throw verbs::VerbsError("rdma_connect", kObject, errno);
          // librdmacm takes the QP to RTR and RTS on the response (the QP is the id's own).
          connected = c->wait_for(RDMA_CM_EVENT_ESTABLISHED, deadline, &last, &got);
        }
      }
      if (connected) return c;
      if (!again()) {
        *why = "connecting to " + where + ": " + last;
        return nullptr;
      }
    } catch (const std::exception& e) {
      *why = e.what();
      return nullptr;
    }
    if (std::chrono::steady_clock::now() + std::chrono::milliseconds(200) >= deadline) {
      *why = "no perftest -R server accepted at " + where + " (" + std::to_string(tries) + " tries, the last " + last +
             "; is the tool running there as server with -R?)";
      return nullptr;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

bool PerftestControl::send(std::string_view bytes, interop::Deadline deadline, std::string* why) {
  if (bytes.size() > kUnitMax) {
    *why = std::to_string(bytes.size()) + " bytes do not fit perftest's control unit";
    return false;
  }
  std::memcpy(buf_->data() + kUnitMax, bytes.data(), bytes.size());
  ibv_sge sge{reinterpret_cast<uintptr_t>(buf_->data() + kUnitMax), static_cast<uint32_t>(bytes.size()), buf_->get()->lkey};
  ibv_send_wr wr{};
  wr.wr_id = kSendId;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_SEND;
  wr.send_flags = IBV_SEND_SIGNALED;
  ibv_send_wr* bad = nullptr;
  if (int err = ibv_post_send(id_.get()->qp, &wr, &bad)) {
    *why = verbs::VerbsError("ibv_post_send", kObject, err).what();
    return false;
  }
  ibv_wc wc{};
  int got = wait_completion(send_cq_->get(), &wc, deadline, stop_, why);
  if (got <= 0) {
    *why = "the SEND to " + remote_ + " did not complete: " + *why;
    return false;
  }
  if (wc.status != IBV_WC_SUCCESS) {
    *why = "the SEND to " + remote_ + " completed with " + ibv_wc_status_str(wc.status);
    return false;
  }
  return true;
}

std::optional<std::string> PerftestControl::receive(size_t n, interop::Deadline deadline, std::string* why,
                                                    const std::atomic<bool>* stop) {
  ibv_wc wc{};
  int got = wait_completion(recv_cq_->get(), &wc, deadline, stop, why);
  if (got <= 0) return std::nullopt;
  if (wc.status != IBV_WC_SUCCESS) {
    *why = "the receive from " + remote_ + " completed with " + ibv_wc_status_str(wc.status);
    return std::nullopt;
  }
  if (wc.byte_len != n) {
    *why = remote_ + " sent " + std::to_string(wc.byte_len) + " bytes, " + std::to_string(n) + " expected";
    return std::nullopt;
  }
  std::string unit(reinterpret_cast<const char*>(buf_->data()), n);
  if (!post_receive(id_.get(), *buf_, why)) return std::nullopt;
  return unit;
}

std::unique_ptr<PerftestControlListener> PerftestControlListener::open(uint16_t port, std::string* why) {
  try {
    std::unique_ptr<PerftestControlListener> l(new PerftestControlListener());
    l->port_ = port;
    l->channel_ = std::make_unique<EventChannel>(kObject);
    l->id_ = Id(*l->channel_, RDMA_PS_TCP, kObject + std::string(" listener"));
    sockaddr_storage any{};
    make_sockaddr("0.0.0.0", port, &any);  // the tool's client dials an IPv4 address (AF_INET only)
    if (rdma_bind_addr(l->id_.get(), reinterpret_cast<sockaddr*>(&any)))
      throw verbs::VerbsError("rdma_bind_addr", kObject, errno, "port " + std::to_string(port));
    if (rdma_listen(l->id_.get(), 1)) throw verbs::VerbsError("rdma_listen", kObject, errno);
    return l;
  } catch (const std::exception& e) {
    *why = e.what();
    return nullptr;
  }
}

std::unique_ptr<PerftestControl> PerftestControlListener::accept_one(interop::Deadline deadline, std::string* why,
                                                                    const std::string& only_from,
                                                                    std::vector<std::string>* refused) {
  try {
    for (;;) {
      int err = 0;
      auto ev = next_event(*channel_, ms_until(deadline), &err);
      if (!ev) {
        *why = err == ETIMEDOUT ? "no perftest -R client connected to port " + std::to_string(port_) + " before the deadline"
                                : "rdma_get_cm_event: " + std::string(strerror(err));
        return nullptr;
      }
      if (ev->type != RDMA_CM_EVENT_CONNECT_REQUEST) continue;
      Id request(ev->id, kObject);
      std::string from = peer_address(ev->id);
      ExpectedPeer tool;
      tool.name = "the tool";
      if (!only_from.empty()) tool.address = only_from;
      if (!not_the_peer(tool, ConnectRequest{.address = from}).empty()) {
        rdma_reject(request.get(), nullptr, 0);
        if (refused) refused->push_back(from);
        continue;  // `request` is destroyed here
      }
      auto channel = std::make_unique<EventChannel>(kObject);
      if (rdma_migrate_id(request.get(), channel->get())) throw verbs::VerbsError("rdma_migrate_id", kObject, errno);
      std::unique_ptr<PerftestControl> c(new PerftestControl(std::move(channel), std::move(request), from));
      c->make_qp();
      rdma_conn_param p = control_param();
      if (rdma_accept(c->id_.get(), &p)) throw verbs::VerbsError("rdma_accept", kObject, errno);
      if (!c->wait_for(RDMA_CM_EVENT_ESTABLISHED, deadline, why)) return nullptr;
      return c;
    }
  } catch (const std::exception& e) {
    *why = e.what();
    return nullptr;
  }
}

}  // namespace qpo::cm
