// rdma_cm between the two lab guests, over QPs the program creates itself (src/cm/flow.h: the
// CM computes INIT/RTR/RTS, ibv_modify_qp applies them). tests/rxe/cm_pair.sh runs it:
//   cm_pair serve PORT            guest b: listens on [::]:PORT. The first request is accepted
//                                 (private data: its MR's addr and rkey), the peer RDMA-writes a
//                                 pattern and sends; the bytes are checked. The second request
//                                 is rejected with private data "go away".
//   cm_pair connect IP PORT       guest a: connects, writes 4 KiB and sends, disconnects
//   cm_pair expect-reject IP PORT guest a: connects; the listener must reject it
//   cm_pair expect-nobody IP PORT guest a: connects to a port nobody listens on
//   cm_pair serve-ud PORT         guest b: a UD listener (RDMA_PS_UDP); accepts one request and
//                                 checks the datagram that follows
//   cm_pair connect-ud IP PORT    guest a: resolves the peer's UD QP through the CM (QPN, qkey,
//                                 address handle) and sends it a datagram
// Every line it prints is one the script checks; every wait has a 30 s timeout.
#include <infiniband/verbs.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "cm/cm.h"
#include "cm/flow.h"
#include "verbs/resources.h"
#include "verbs/verbs_error.h"

namespace {

using namespace qpo;

constexpr int kTimeoutMs = 30000;
// A request nobody answers: the CM retries the REQ before it gives up (UNREACHABLE).
constexpr int kNobodyTimeoutMs = 120000;
constexpr size_t kBytes = 4096;

struct Remote {
  uint64_t addr;
  uint32_t rkey;
};

// The verbs objects of one connection, on the device the CM resolved (id->verbs).
struct Objects {
  std::unique_ptr<verbs::Pd> pd;
  std::unique_ptr<verbs::Cq> cq;
  std::unique_ptr<verbs::Mr> mr;
  std::unique_ptr<verbs::Qp> qp;
  std::unique_ptr<verbs::Ah> ah;
  ~Objects() {  // reverse creation order
    ah.reset();
    qp.reset();
    mr.reset();
    cq.reset();
    pd.reset();
  }
  void create(ibv_context* ctx, ibv_qp_type type = IBV_QPT_RC) {
    pd = std::make_unique<verbs::Pd>("pd", ctx);
    cq = std::make_unique<verbs::Cq>("cq", ctx, 16, nullptr);
    mr = std::make_unique<verbs::Mr>("mr", pd->get(), kBytes, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
    ibv_qp_init_attr init{};
    init.send_cq = init.recv_cq = cq->get();
    init.qp_type = type;
    init.cap.max_send_wr = init.cap.max_recv_wr = 4;
    init.cap.max_send_sge = init.cap.max_recv_sge = 1;
    qp = std::make_unique<verbs::Qp>("qp", ctx, pd->get(), nullptr, init);
  }
  ibv_wc poll_one(const char* what) {
    ibv_wc wc{};
    for (int i = 0; i < kTimeoutMs; ++i) {
      int n = ibv_poll_cq(cq->get(), 1, &wc);
      if (n > 0) {
        if (wc.status != IBV_WC_SUCCESS)
          throw std::runtime_error(std::string(what) + ": completion " + ibv_wc_status_str(wc.status));
        return wc;
      }
      usleep(1000);
    }
    throw std::runtime_error(std::string(what) + ": no completion");
  }
};

uint8_t pattern(size_t i) { return static_cast<uint8_t>(i * 7 + 3); }

rdma_conn_param conn_param(const void* data, size_t len, uint32_t qp_num) {
  rdma_conn_param p{};
  p.private_data = data;
  p.private_data_len = static_cast<uint8_t>(len);
  p.responder_resources = 1;
  p.initiator_depth = 1;
  p.retry_count = 7;
  p.rnr_retry_count = 7;
  p.qp_num = qp_num;
  return p;
}

// Active side up to the CONNECT_RESPONSE (or whatever came instead: thrown as cm::Unexpected).
cm::Event connect(cm::EventChannel& ch, cm::Id& id, Objects& o, const std::string& ip, uint16_t port,
                  const char* hello, int response_timeout_ms = kTimeoutMs) {
  sockaddr_storage dst;
  if (!cm::make_sockaddr(ip, port, &dst)) throw std::runtime_error("not an IP address: " + ip);
  if (rdma_resolve_addr(id.get(), nullptr, reinterpret_cast<sockaddr*>(&dst), 5000) != 0)
    throw verbs::VerbsError("rdma_resolve_addr", ip, errno);
  auto e = cm::expect_event(ch, RDMA_CM_EVENT_ADDR_RESOLVED, kTimeoutMs, "qa");
  std::printf("connect: %s\n", cm::describe(e).c_str());
  if (rdma_resolve_route(id.get(), 5000) != 0) throw verbs::VerbsError("rdma_resolve_route", ip, errno);
  e = cm::expect_event(ch, RDMA_CM_EVENT_ROUTE_RESOLVED, kTimeoutMs, "qa");
  std::printf("connect: %s on %s\n", cm::describe(e).c_str(), ibv_get_device_name(id.get()->verbs->device));
  o.create(id.get()->verbs);
  cm::modify_by_cm(id.get(), o.qp->get(), IBV_QPS_INIT, "qa");
  auto p = conn_param(hello, std::strlen(hello) + 1, o.qp->get()->qp_num);
  if (rdma_connect(id.get(), &p) != 0) throw verbs::VerbsError("rdma_connect", "qa", errno);
  return cm::expect_event(ch, RDMA_CM_EVENT_CONNECT_RESPONSE, response_timeout_ms, "qa");
}

int cmd_connect(const std::string& ip, uint16_t port) {
  cm::EventChannel ch("qa.channel");
  cm::Id id(ch, RDMA_PS_TCP, "qa");
  Objects o;
  auto resp = connect(ch, id, o, ip, port, "hello");
  Remote r{};
  if (resp.private_data.size() < sizeof r) throw std::runtime_error("accept carried no addr/rkey");
  std::memcpy(&r, resp.private_data.data(), sizeof r);
  std::printf("connect: RDMA_CM_EVENT_CONNECT_RESPONSE (peer QP %u, rkey 0x%x)\n", resp.qp_num, r.rkey);
  int rtr = cm::modify_by_cm(id.get(), o.qp->get(), IBV_QPS_RTR, "qa");
  int rts = cm::modify_by_cm(id.get(), o.qp->get(), IBV_QPS_RTS, "qa");
  std::printf("connect: RTR mask 0x%x, RTS mask 0x%x\n", rtr, rts);
  if (rdma_establish(id.get()) != 0) throw verbs::VerbsError("rdma_establish", "qa", errno);
  for (size_t i = 0; i < kBytes; ++i) o.mr->data()[i] = pattern(i);
  ibv_sge sge{reinterpret_cast<uint64_t>(o.mr->data()), static_cast<uint32_t>(kBytes), o.mr->get()->lkey};
  ibv_send_wr write{}, send{}, *bad = nullptr;
  write.opcode = IBV_WR_RDMA_WRITE;
  write.sg_list = &sge;
  write.num_sge = 1;
  write.wr.rdma.remote_addr = r.addr;
  write.wr.rdma.rkey = r.rkey;
  write.next = &send;
  send.opcode = IBV_WR_SEND;  // zero bytes: "the write is there"
  send.send_flags = IBV_SEND_SIGNALED;
  if (int e = ibv_post_send(o.qp->get(), &write, &bad)) throw verbs::VerbsError("ibv_post_send", "qa", e);
  o.poll_one("write + send");
  std::printf("connect: wrote %zu bytes and sent\n", kBytes);
  if (rdma_disconnect(id.get()) != 0) throw verbs::VerbsError("rdma_disconnect", "qa", errno);
  auto d = cm::expect_event(ch, RDMA_CM_EVENT_DISCONNECTED, kTimeoutMs, "qa");
  std::printf("connect: %s\n", cm::describe(d).c_str());
  return 0;
}

// A connection that must not be made: prints the event that came instead.
int cmd_expect_failure(const std::string& ip, uint16_t port, const char* hello, int timeout_ms) {
  cm::EventChannel ch("qa.channel");
  cm::Id id(ch, RDMA_PS_TCP, "qa");
  Objects o;
  try {
    connect(ch, id, o, ip, port, hello, timeout_ms);
  } catch (const cm::Unexpected& u) {
    std::printf("refused: %s\n", u.what());
    return u.got() ? 0 : 1;
  }
  std::printf("connected, but the connection should have failed\n");
  return 1;
}

// Binds `listener` to [::]:PORT (IPv4 too) and listens; tells the other guest through a file.
void listen_on(cm::Id& listener, uint16_t port, const char* who) {
  sockaddr_storage any;
  cm::make_sockaddr("::", port, &any);
  if (rdma_bind_addr(listener.get(), reinterpret_cast<sockaddr*>(&any)) != 0)
    throw verbs::VerbsError("rdma_bind_addr", "listener", errno);
  if (rdma_listen(listener.get(), 4) != 0) throw verbs::VerbsError("rdma_listen", "listener", errno);
  std::printf("%s: listening on port %u\n", who, port);
  // The other guest connects once this file is there (lab.sh run2 shares $QPO_LAB_OUT).
  if (const char* out = std::getenv("QPO_LAB_OUT"))
    if (FILE* f = std::fopen((std::string(out) + "/b-listening-" + std::to_string(port)).c_str(), "w")) std::fclose(f);
}

constexpr char kDatagram[] = "a datagram through rdma_cm";

// UD through RDMA_PS_UDP: the request is a SIDR REQ; the accept tells the peer this QP's
// number and qkey; the datagram is checked.
int cmd_serve_ud(uint16_t port) {
  cm::EventChannel ch("listener.channel");
  cm::Id listener(ch, RDMA_PS_UDP, "listener");
  listen_on(listener, port, "serve-ud");
  auto req = cm::expect_event(ch, RDMA_CM_EVENT_CONNECT_REQUEST, kTimeoutMs, "listener");
  cm::Id id(req.id, "ub");
  std::printf("serve-ud: %s\n", cm::describe(req).c_str());
  Objects o;
  o.create(id.get()->verbs, IBV_QPT_UD);
  std::memset(o.mr->data(), 0, kBytes);
  cm::modify_by_cm(id.get(), o.qp->get(), IBV_QPS_INIT, "ub");
  ibv_sge sge{reinterpret_cast<uint64_t>(o.mr->data()), static_cast<uint32_t>(kBytes), o.mr->get()->lkey};
  ibv_recv_wr rwr{}, *bad = nullptr;
  rwr.sg_list = &sge;
  rwr.num_sge = 1;
  if (int e = ibv_post_recv(o.qp->get(), &rwr, &bad)) throw verbs::VerbsError("ibv_post_recv", "ub", e);
  cm::modify_by_cm(id.get(), o.qp->get(), IBV_QPS_RTR, "ub");
  cm::modify_by_cm(id.get(), o.qp->get(), IBV_QPS_RTS, "ub");
  auto p = conn_param(nullptr, 0, o.qp->get()->qp_num);
  if (rdma_accept(id.get(), &p) != 0) throw verbs::VerbsError("rdma_accept", "ub", errno);
  auto wc = o.poll_one("receive");
  // A UD receive starts with the 40-byte GRH room.
  std::string got(reinterpret_cast<const char*>(o.mr->data()) + 40);
  std::printf("serve-ud: received %u bytes: '%s'\n", wc.byte_len - 40, got.c_str());
  return got == kDatagram ? 0 : 1;
}

int cmd_connect_ud(const std::string& ip, uint16_t port) {
  cm::EventChannel ch("ua.channel");
  cm::Id id(ch, RDMA_PS_UDP, "ua");
  sockaddr_storage dst;
  if (!cm::make_sockaddr(ip, port, &dst)) throw std::runtime_error("not an IP address: " + ip);
  if (rdma_resolve_addr(id.get(), nullptr, reinterpret_cast<sockaddr*>(&dst), 5000) != 0)
    throw verbs::VerbsError("rdma_resolve_addr", ip, errno);
  cm::expect_event(ch, RDMA_CM_EVENT_ADDR_RESOLVED, kTimeoutMs, "ua");
  if (rdma_resolve_route(id.get(), 5000) != 0) throw verbs::VerbsError("rdma_resolve_route", ip, errno);
  cm::expect_event(ch, RDMA_CM_EVENT_ROUTE_RESOLVED, kTimeoutMs, "ua");
  Objects o;
  o.create(id.get()->verbs, IBV_QPT_UD);
  cm::modify_by_cm(id.get(), o.qp->get(), IBV_QPS_INIT, "ua");
  cm::modify_by_cm(id.get(), o.qp->get(), IBV_QPS_RTR, "ua");
  cm::modify_by_cm(id.get(), o.qp->get(), IBV_QPS_RTS, "ua");
  const char hello[] = "ud hello";
  auto p = conn_param(hello, sizeof hello, o.qp->get()->qp_num);
  if (rdma_connect(id.get(), &p) != 0) throw verbs::VerbsError("rdma_connect", "ua", errno);
  auto est = cm::expect_event(ch, RDMA_CM_EVENT_ESTABLISHED, kTimeoutMs, "ua");
  std::printf("connect-ud: %s (peer QP %u, qkey 0x%x)\n", cm::describe(est).c_str(), est.qp_num, est.qkey);
  o.ah = std::make_unique<verbs::Ah>("ah", o.pd->get(), est.ah_attr);
  std::memcpy(o.mr->data(), kDatagram, sizeof kDatagram);
  ibv_sge sge{reinterpret_cast<uint64_t>(o.mr->data()), static_cast<uint32_t>(sizeof kDatagram), o.mr->get()->lkey};
  ibv_send_wr wr{}, *bad = nullptr;
  wr.opcode = IBV_WR_SEND;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.wr.ud.ah = o.ah->get();
  wr.wr.ud.remote_qpn = est.qp_num;
  wr.wr.ud.remote_qkey = est.qkey;
  if (int e = ibv_post_send(o.qp->get(), &wr, &bad)) throw verbs::VerbsError("ibv_post_send", "ua", e);
  o.poll_one("send");
  std::printf("connect-ud: sent %zu bytes\n", sizeof kDatagram);
  return 0;
}

int cmd_serve(uint16_t port) {
  cm::EventChannel ch("listener.channel");
  cm::Id listener(ch, RDMA_PS_TCP, "listener");
  listen_on(listener, port, "serve");
  {  // 1: accepted, written to, checked
    auto req = cm::expect_event(ch, RDMA_CM_EVENT_CONNECT_REQUEST, kTimeoutMs, "listener");
    cm::Id id(req.id, "qb");
    std::printf("serve: %s\n", cm::describe(req).c_str());
    Objects o;
    o.create(id.get()->verbs);
    std::memset(o.mr->data(), 0, kBytes);
    cm::modify_by_cm(id.get(), o.qp->get(), IBV_QPS_INIT, "qb");
    ibv_recv_wr rwr{}, *bad = nullptr;
    if (int e = ibv_post_recv(o.qp->get(), &rwr, &bad)) throw verbs::VerbsError("ibv_post_recv", "qb", e);
    cm::modify_by_cm(id.get(), o.qp->get(), IBV_QPS_RTR, "qb");
    Remote r{reinterpret_cast<uint64_t>(o.mr->data()), o.mr->get()->rkey};
    auto p = conn_param(&r, sizeof r, o.qp->get()->qp_num);
    if (rdma_accept(id.get(), &p) != 0) throw verbs::VerbsError("rdma_accept", "qb", errno);
    auto est = cm::expect_event(ch, RDMA_CM_EVENT_ESTABLISHED, kTimeoutMs, "qb");
    std::printf("serve: %s\n", cm::describe(est).c_str());
    cm::modify_by_cm(id.get(), o.qp->get(), IBV_QPS_RTS, "qb");
    o.poll_one("receive");
    size_t wrong = 0;
    for (size_t i = 0; i < kBytes; ++i) wrong += o.mr->data()[i] != pattern(i);
    std::printf("serve: %zu bytes written through the connection, %zu wrong\n", kBytes, wrong);
    auto d = cm::expect_event(ch, RDMA_CM_EVENT_DISCONNECTED, kTimeoutMs, "qb");
    std::printf("serve: %s\n", cm::describe(d).c_str());
    if (wrong) return 1;
  }
  {  // 2: rejected with private data
    auto req = cm::expect_event(ch, RDMA_CM_EVENT_CONNECT_REQUEST, kTimeoutMs, "listener");
    cm::Id id(req.id, "qb2");
    std::printf("serve: %s\n", cm::describe(req).c_str());
    const char why[] = "go away";
    if (rdma_reject(id.get(), why, sizeof why) != 0) throw verbs::VerbsError("rdma_reject", "qb2", errno);
    std::printf("serve: rejected\n");
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  std::string cmd = argc > 1 ? argv[1] : "";
  try {
    if (cmd == "serve" && argc == 3) return cmd_serve(static_cast<uint16_t>(std::stoi(argv[2])));
    if (cmd == "serve-ud" && argc == 3) return cmd_serve_ud(static_cast<uint16_t>(std::stoi(argv[2])));
    if (cmd == "connect-ud" && argc == 4) return cmd_connect_ud(argv[2], static_cast<uint16_t>(std::stoi(argv[3])));
    if (cmd == "connect" && argc == 4) return cmd_connect(argv[2], static_cast<uint16_t>(std::stoi(argv[3])));
    if (cmd == "expect-reject" && argc == 4)
      return cmd_expect_failure(argv[2], static_cast<uint16_t>(std::stoi(argv[3])), "please", kTimeoutMs);
    if (cmd == "expect-nobody" && argc == 4)
      return cmd_expect_failure(argv[2], static_cast<uint16_t>(std::stoi(argv[3])), "anyone?", kNobodyTimeoutMs);
  } catch (const std::exception& e) {
    std::printf("error: %s\n", e.what());
    return 1;
  }
  std::fprintf(stderr,
               "usage: cm_pair serve PORT | connect IP PORT | expect-reject IP PORT | expect-nobody IP PORT |\n"
               "               serve-ud PORT | connect-ud IP PORT\n");
  return 2;
}
