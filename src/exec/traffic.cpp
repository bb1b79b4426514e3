// Traffic that proves "up" means data flows: a smoke exchange after bring-up (SEND/RECV and
// RDMA WRITE, contents checked) and the scenario's simple workloads (op x iterations, data
// checked). Lua-scripted workloads build on this data path later.
#include <arpa/inet.h>

#include <chrono>
#include <cstring>

#include "exec/steps.h"
#include "util/strings.h"

namespace qpo::exec {

namespace {

constexpr uint32_t kSmokeBytes = 64;

void fill_pattern(uint8_t* p, size_t n, uint32_t seed) {
  uint32_t x = seed * 2654435761u + 1;
  for (size_t i = 0; i < n; ++i) {
    x = x * 1103515245u + 12345u;
    p[i] = static_cast<uint8_t>(x >> 16);
  }
}

uint8_t* send_buffer(QpState& q) { return q.slots->data() + static_cast<size_t>(q.slot_count - 1) * q.slot_size; }

bool is_ud(const QpState& q) { return q.spec->type_name == "UD"; }

// A UD sender needs an address handle for its peer; created once, owned like everything else.
ibv_ah* ah_for(RunState& st, QpState& from, QpState& to) {
  std::string name = "qpo.ah." + from.spec->name + "->" + to.spec->name;
  for (auto& r : st.owned)
    if (r->name() == name) return static_cast<verbs::Ah*>(r.get())->get();
  ibv_ah_attr ah{};
  ah.port_num = from.device->ctx().port();
  ah.dlid = to.device->ctx().port_attr().lid;
  ah.is_global = 1;
  ah.grh.dgid = to.device->gid;
  ah.grh.sgid_index = static_cast<uint8_t>(from.device->gid_index);
  ah.grh.hop_limit = 1;
  return st.own<verbs::Ah>(name, from.pd, ah)->get();
}

int post_one(RunState& st, QpState& q, QpState& peer, ibv_wr_opcode op, ibv_sge* sge, uint64_t wr_id,
             uint64_t remote_addr, uint32_t rkey, uint64_t compare_add, uint64_t swap) {
  ibv_send_wr wr{};
  wr.wr_id = wr_id;
  wr.opcode = op;
  wr.sg_list = sge;
  wr.num_sge = 1;
  wr.send_flags = IBV_SEND_SIGNALED;
  if (op == IBV_WR_SEND_WITH_IMM || op == IBV_WR_RDMA_WRITE_WITH_IMM) wr.imm_data = htonl(0x51504f);
  if (op == IBV_WR_RDMA_WRITE || op == IBV_WR_RDMA_WRITE_WITH_IMM || op == IBV_WR_RDMA_READ) {
    wr.wr.rdma.remote_addr = remote_addr;
    wr.wr.rdma.rkey = rkey;
  } else if (op == IBV_WR_ATOMIC_CMP_AND_SWP || op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
    wr.wr.atomic.remote_addr = remote_addr;
    wr.wr.atomic.rkey = rkey;
    wr.wr.atomic.compare_add = compare_add;
    wr.wr.atomic.swap = swap;
  }
  if (is_ud(q)) {
    wr.wr.ud.ah = ah_for(st, q, peer);
    wr.wr.ud.remote_qpn = peer.qp->get()->qp_num;
    wr.wr.ud.remote_qkey = peer.qkey;
  }
  ibv_send_wr* bad = nullptr;
  return ibv_post_send(q.qp->get(), &wr, &bad);
}

// The next receive completion for `receiver` (own RQ or its SRQ); re-posts the slot after
// copying out what the caller needs through `check`.
template <typename Check>
std::string take_receive(RunState& st, QpState& receiver, int timeout_ms, Check check) {
  uint32_t qpn = receiver.qp->get()->qp_num;
  auto wc = st.completions.wait_if(
      receiver.recv_cq, [&](const ibv_wc& w) { return w.qp_num == qpn && (w.opcode & IBV_WC_RECV); }, timeout_ms);
  if (!wc) return "no receive completion on '" + receiver.spec->name + "' within " + std::to_string(timeout_ms) + " ms";
  if (wc->status != IBV_WC_SUCCESS) return std::string("receive completed with ") + wc_status_name(wc->status);
  uint32_t slot = static_cast<uint32_t>(wc->wr_id & 0xFFFFFFFF);
  const uint8_t* data;
  if (receiver.srq) {
    const auto& ss = st.srqs.at(receiver.spec->srq.name);
    data = ss.slots->data() + static_cast<size_t>(slot) * ss.slot_size;
  } else {
    data = receiver.slots->data() + static_cast<size_t>(slot) * receiver.slot_size;
    if (receiver.posted_recvs) --receiver.posted_recvs;
  }
  if (is_ud(receiver)) data += 40;  // UD receives start with the GRH
  std::string problem = check(*wc, data);
  if (receiver.srq) post_srq_slot(st, receiver.spec->srq.name, slot);
  else post_recv_slot(st, receiver, slot);
  return problem;
}

std::string wait_send(RunState& st, QpState& q, uint64_t wr_id, int timeout_ms) {
  auto wc = st.completions.wait(q.send_cq, wr_id, timeout_ms);
  if (!wc) return "no send completion on '" + q.spec->name + "' within " + std::to_string(timeout_ms) + " ms";
  if (wc->status != IBV_WC_SUCCESS) return std::string("send completed with ") + wc_status_name(wc->status);
  return "";
}

// SEND a -> b (and for RC/UC also RDMA WRITE a -> b's slot memory), data checked.
std::string smoke_one_way(RunState& st, QpState& a, QpState& b, int timeout_ms, uint32_t seq) {
  uint8_t* buf = send_buffer(a);
  fill_pattern(buf, kSmokeBytes, seq);
  ibv_sge sge{reinterpret_cast<uintptr_t>(buf), kSmokeBytes, a.slots->get()->lkey};
  uint64_t id = make_wr_id(WrKind::Smoke, ordinal_of(st, a.spec->name), seq);
  if (int e = post_one(st, a, b, IBV_WR_SEND, &sge, id, 0, 0, 0, 0))
    return "ibv_post_send(SEND) failed: " + verbs::errno_name(e);
  if (auto p = wait_send(st, a, id, timeout_ms); !p.empty()) return p;
  auto p = take_receive(st, b, timeout_ms, [&](const ibv_wc& wc, const uint8_t* data) -> std::string {
    uint32_t expect_len = kSmokeBytes + (is_ud(b) ? 40 : 0);
    if (wc.byte_len != expect_len) return "received " + std::to_string(wc.byte_len) + " bytes, expected " + std::to_string(expect_len);
    if (std::memcmp(data, buf, kSmokeBytes) != 0) return "received data differs from what was sent";
    return "";
  });
  if (!p.empty()) return p;
  if (is_ud(a)) return "";
  // RDMA WRITE into the peer's send-buffer slot, if the peer grants remote write.
  bool granted = false;
  for (const auto& t : b.spec->transitions)
    if (const auto* f = t.attr("qp_access_flags")) granted = (f->number & IBV_ACCESS_REMOTE_WRITE) != 0;
  if (!granted) return "";
  uint8_t* target = send_buffer(b);
  std::memset(target, 0, kSmokeBytes);
  fill_pattern(buf, kSmokeBytes, seq + 7);
  id = make_wr_id(WrKind::Smoke, ordinal_of(st, a.spec->name), seq + 1);
  if (int e = post_one(st, a, b, IBV_WR_RDMA_WRITE, &sge, id, reinterpret_cast<uintptr_t>(target), b.slots->get()->rkey, 0, 0))
    return "ibv_post_send(RDMA_WRITE) failed: " + verbs::errno_name(e);
  if (auto w = wait_send(st, a, id, timeout_ms); !w.empty()) return w;
  // UC completes at the sender before the data lands; give it the timeout to arrive.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::memcmp(target, buf, kSmokeBytes) != 0) {
    if (std::chrono::steady_clock::now() > deadline) return "RDMA WRITE data did not arrive intact";
    std::this_thread::yield();
  }
  return "";
}

}  // namespace

bool smoke_exchange(RunState& st, const RunOptions& o, const char* phase) {
  uint32_t seq = 1;
  for (auto& [name, a] : st.qps) {
    QpState* b = peer_of(st, a);
    if (!b || a.state != spec::QpState::RTS) continue;
    bool connected = !is_ud(a);
    if (connected && b->state != spec::QpState::RTS) continue;
    if (!is_ud(a) && a.spec->type_name != "RC" && a.spec->type_name != "UC") continue;
    if (b->state != spec::QpState::RTR && b->state != spec::QpState::RTS) continue;
    if (!a.slots || (!b->slots && !b->srq)) continue;
    std::string detail = std::string(is_ud(a) ? "SEND" : "SEND + RDMA WRITE") + " " + a.spec->name + " -> " + b->spec->name +
                         ", " + std::to_string(kSmokeBytes) + " B";
    auto& r = run_step(st, a.host, phase, "smoke", a.spec->name, detail, [&] {
      std::string problem = smoke_one_way(st, a, *b, o.timeout_ms, seq);
      if (!problem.empty()) throw std::runtime_error(problem);
    });
    seq += 16;
    if (r.status == report::StepStatus::Failed) return false;
    r.message = "data checked";
  }
  return true;
}

bool run_workloads(RunState& st, const RunOptions& o) {
  for (const auto& w : st.scenario->workloads) {
    if (w.op.empty()) {
      report::StepResult r;
      r.phase = "traffic";
      r.verb = "script";
      r.object = w.name;
      r.status = report::StepStatus::Skipped;
      r.message = "Lua workloads are not implemented yet (script: " + w.script + ")";
      st.report.add(r);
      st.report.fail("workload '" + w.name + "' needs the Lua runtime, which is not implemented yet");
      return false;
    }
    auto& q = st.qps.at(w.qp.name);
    QpState* peer = peer_of(st, q);
    std::string detail = "IBV_WR_" + util::to_upper(w.op) + " x" + std::to_string(w.iterations) + ", " +
                         std::to_string(w.size) + " B";
    std::string outcome;
    auto& r = run_step(st, q.host, "traffic", "workload", w.name, detail, [&] {
      if (!peer) throw std::runtime_error("workload QP has no peer");
      verbs::Mr* local = w.local_mr ? st.mrs.at(w.local_mr.name) : q.slots;
      verbs::Mr* remote = w.remote_mr ? st.mrs.at(w.remote_mr.name) : nullptr;
      ibv_wr_opcode op = IBV_WR_SEND;
      if (w.op == "send_with_imm") op = IBV_WR_SEND_WITH_IMM;
      else if (w.op == "rdma_write") op = IBV_WR_RDMA_WRITE;
      else if (w.op == "rdma_write_with_imm") op = IBV_WR_RDMA_WRITE_WITH_IMM;
      else if (w.op == "rdma_read") op = IBV_WR_RDMA_READ;
      else if (w.op == "atomic_cmp_swp") op = IBV_WR_ATOMIC_CMP_AND_SWP;
      else if (w.op == "atomic_fetch_add") op = IBV_WR_ATOMIC_FETCH_AND_ADD;
      bool atomic = op == IBV_WR_ATOMIC_CMP_AND_SWP || op == IBV_WR_ATOMIC_FETCH_AND_ADD;
      bool consumes_recv = op == IBV_WR_SEND || op == IBV_WR_SEND_WITH_IMM || op == IBV_WR_RDMA_WRITE_WITH_IMM;
      uint32_t size = static_cast<uint32_t>(w.size);
      fill_pattern(local->data(), size, 99);
      if (remote) {
        if (op == IBV_WR_RDMA_READ) fill_pattern(remote->data(), size, 77);
        else std::memset(remote->data(), 0, std::min<size_t>(remote->length(), size));
      }
      if (op == IBV_WR_RDMA_READ) std::memset(local->data(), 0, size);
      ibv_sge sge{reinterpret_cast<uintptr_t>(local->data()), size, local->get()->lkey};
      uint32_t depth = std::max(1u, std::min(q.spec->cap.max_send_wr, 16u));
      if (consumes_recv) depth = 1;  // keep receives ahead of sends without an RNR storm
      uint32_t ord = ordinal_of(st, q.spec->name);
      uint64_t posted = 0, done = 0;
      auto start = std::chrono::steady_clock::now();
      while (done < w.iterations) {
        if (stop_requested()) throw std::runtime_error("interrupted");
        while (posted < w.iterations && posted - done < depth) {
          uint64_t id = make_wr_id(WrKind::Work, ord, static_cast<uint32_t>(posted));
          uint64_t addr = remote ? reinterpret_cast<uintptr_t>(remote->data()) : 0;
          uint32_t rkey = remote ? remote->get()->rkey : 0;
          uint64_t cmp = op == IBV_WR_ATOMIC_FETCH_AND_ADD ? 1 : posted;
          if (int e = post_one(st, q, *peer, op, &sge, id, addr, rkey, cmp, posted + 1))
            throw verbs::VerbsError("ibv_post_send", q.spec->name, e, "IBV_WR_" + util::to_upper(w.op));
          ++posted;
        }
        auto wc = st.completions.wait_tagged(q.send_cq, 0xFFFFFFFF00000000ULL,
                                             make_wr_id(WrKind::Work, ord, 0), o.timeout_ms);
        if (!wc) throw std::runtime_error("no completion within " + std::to_string(o.timeout_ms) + " ms after " +
                                          std::to_string(done) + " of " + std::to_string(w.iterations));
        if (wc->status != IBV_WC_SUCCESS) {
          std::string status = wc_status_name(wc->status);
          if (w.expect_status && *w.expect_status == status) {
            outcome = "completion status " + status + ", as the scenario expects";
            return;
          }
          throw std::runtime_error("completion " + std::to_string(done) + " has status " + status +
                                   (w.expect_status ? "; expected " + *w.expect_status : ""));
        }
        ++done;
        if (consumes_recv) {
          auto p = take_receive(st, *peer, o.timeout_ms, [&](const ibv_wc& rwc, const uint8_t* data) -> std::string {
            if (op == IBV_WR_RDMA_WRITE_WITH_IMM) return "";
            if (rwc.byte_len != size + (is_ud(*peer) ? 40u : 0u)) return "received " + std::to_string(rwc.byte_len) + " bytes";
            return std::memcmp(data, local->data(), size) == 0 ? "" : "received data differs from what was sent";
          });
          if (!p.empty()) throw std::runtime_error(p);
        }
      }
      double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (w.expect_status) throw std::runtime_error("all completions succeeded; expected " + *w.expect_status);
      // Data check on the responder's memory.
      if (op == IBV_WR_RDMA_WRITE && std::memcmp(remote->data(), local->data(), size) != 0)
        throw std::runtime_error("remote MR does not hold the written data");
      if (op == IBV_WR_RDMA_READ) {
        std::vector<uint8_t> want(size);
        fill_pattern(want.data(), size, 77);
        if (std::memcmp(local->data(), want.data(), size) != 0) throw std::runtime_error("read data differs from the remote MR");
      }
      if (atomic) {
        uint64_t v;
        std::memcpy(&v, remote->data(), 8);
        if (v != w.iterations)
          throw std::runtime_error("remote counter is " + std::to_string(v) + " after " + std::to_string(w.iterations) +
                                   " atomics, expected " + std::to_string(w.iterations));
      }
      char buf[160];
      std::snprintf(buf, sizeof buf, "data checked; %.3f s, %.1f kmsg/s, %.2f MB/s", secs, w.iterations / secs / 1e3,
                    static_cast<double>(w.iterations) * size / secs / 1e6);
      outcome = buf;
    });
    r.message = r.status == report::StepStatus::Failed ? r.message : outcome;
    if (r.status == report::StepStatus::Ok && w.expect_status) r.status = report::StepStatus::ExpectedFailure;
    if (r.status == report::StepStatus::Failed) return false;
  }
  return true;
}

}  // namespace qpo::exec
