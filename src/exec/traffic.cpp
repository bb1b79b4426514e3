// Traffic that proves "up" means data flows, with each host playing only its own role:
//  - smoke: for every connected pair, the sender SENDs (and RDMA WRITEs, if the receiver
//    grants remote write) a pattern; the receiver checks both arrived intact;
//  - workloads: the initiator runs `op` x iterations; the responder re-posts receives for
//    send-type ops and checks the data afterwards (writes, atomics) or provides it (reads).
// Senders never wait for the receiving process, so pairs split across hosts run in the same
// fixed order on both without deadlock. Lua-scripted workloads build on this data path.
#include <arpa/inet.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <thread>

#include "dataplane/clock.h"
#include "dataplane/send_queue_nudge.h"
#include "exec/async_events.h"
#include "exec/stall_watch.h"
#include "exec/steps.h"
#include "exec/workload_results.h"
#include "util/strings.h"

namespace qpo::exec {

namespace {

constexpr uint32_t kSmokeBytes = 64;
using Clock = std::chrono::steady_clock;

void fill_pattern(uint8_t* p, size_t n, uint32_t seed) {
  uint32_t x = seed * 2654435761u + 1;
  for (size_t i = 0; i < n; ++i) {
    x = x * 1103515245u + 12345u;
    p[i] = static_cast<uint8_t>(x >> 16);
  }
}

bool matches_pattern(const uint8_t* p, size_t n, uint32_t seed) {
  std::vector<uint8_t> want(n);
  fill_pattern(want.data(), n, seed);
  return std::memcmp(p, want.data(), n) == 0;
}

uint8_t* send_buffer(QpState& q) { return q.slots->data() + static_cast<size_t>(q.slot_count - 1) * q.slot_size; }
bool is_ud(const QpState& q) { return q.spec->type_name == "UD"; }

struct SendArgs {
  ibv_wr_opcode op = IBV_WR_SEND;
  ibv_sge* sge = nullptr;
  uint64_t wr_id = 0;
  uint64_t remote_addr = 0;
  uint32_t rkey = 0;
  uint64_t compare_add = 0, swap = 0;
};

int post_one(RunState& st, QpState& q, const std::string& peer_name, const RemoteQp& peer, const SendArgs& a) {
  ibv_send_wr wr{};
  wr.wr_id = a.wr_id;
  wr.opcode = a.op;
  wr.sg_list = a.sge;
  wr.num_sge = 1;
  wr.send_flags = IBV_SEND_SIGNALED;
  if (a.op == IBV_WR_SEND_WITH_IMM || a.op == IBV_WR_RDMA_WRITE_WITH_IMM) wr.imm_data = htonl(0x51504f);
  if (a.op == IBV_WR_RDMA_WRITE || a.op == IBV_WR_RDMA_WRITE_WITH_IMM || a.op == IBV_WR_RDMA_READ) {
    wr.wr.rdma.remote_addr = a.remote_addr;
    wr.wr.rdma.rkey = a.rkey;
  } else if (a.op == IBV_WR_ATOMIC_CMP_AND_SWP || a.op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
    wr.wr.atomic.remote_addr = a.remote_addr;
    wr.wr.atomic.rkey = a.rkey;
    wr.wr.atomic.compare_add = a.compare_add;
    wr.wr.atomic.swap = a.swap;
  }
  if (is_ud(q)) {
    wr.wr.ud.ah = peer_ah(st, q, peer_name, peer);
    wr.wr.ud.remote_qpn = peer.qpn;
    wr.wr.ud.remote_qkey = peer.qkey;
  }
  ibv_send_wr* bad = nullptr;
  return ibv_post_send(q.qp->get(), &wr, &bad);
}

bool is_receive_of(const ibv_wc& w, uint32_t qpn) { return w.qp_num == qpn && (w.opcode & IBV_WC_RECV); }

// Data of a receive completion; re-posts its slot after `check` looked at it.
template <typename Check>
std::string consume_receive(RunState& st, QpState& receiver, const ibv_wc& wc, Check check) {
  if (wc.status != IBV_WC_SUCCESS) return std::string("receive completed with ") + wc_status_name(wc.status);
  uint32_t slot = static_cast<uint32_t>(wc.wr_id & 0xFFFFFFFF);
  const uint8_t* data;
  if (receiver.srq) {
    const auto& ss = st.srqs.at(receiver.spec->srq.name);
    data = ss.slots->data() + static_cast<size_t>(slot) * ss.slot_size;
  } else {
    data = receiver.slots->data() + static_cast<size_t>(slot) * receiver.slot_size;
    if (receiver.posted_recvs) --receiver.posted_recvs;
  }
  if (is_ud(receiver)) data += 40;  // UD receives start with the GRH
  std::string problem = check(wc, data);
  if (receiver.srq) post_srq_slot(st, receiver.spec->srq.name, slot);
  else post_recv_slot(st, receiver, slot);
  return problem;
}

std::string wait_send(RunState& st, QpState& q, uint64_t wr_id, int timeout_ms) {
  auto wc = st.completions.wait(q.send_cq, wr_id, timeout_ms);
  if (!wc)
    return "no send completion on '" + q.spec->name + "' within " + std::to_string(timeout_ms) + " ms" +
           describe_async_events(st);
  if (wc->status != IBV_WC_SUCCESS) return std::string("send completed with ") + wc_status_name(wc->status);
  return "";
}

using plan::SmokePair;

std::string smoke_send(RunState& st, const SmokePair& pair, int timeout_ms) {
  auto& a = st.qps.at(pair.sender);
  const RemoteQp& b = st.dir.qps.at(pair.receiver);
  uint8_t* buf = send_buffer(a);
  fill_pattern(buf, kSmokeBytes, pair.seed);
  ibv_sge sge{reinterpret_cast<uintptr_t>(buf), kSmokeBytes, a.slots->get()->lkey};
  SendArgs args;
  args.sge = &sge;
  args.wr_id = make_wr_id(WrKind::Smoke, ordinal_of(st, a.spec->name), pair.seed);
  if (int e = post_one(st, a, pair.receiver, b, args)) return "ibv_post_send(SEND) failed: " + verbs::errno_name(e);
  if (auto p = wait_send(st, a, args.wr_id, timeout_ms); !p.empty()) return p;
  if (!pair.rdma_write) return "";
  const auto& target = st.dir.mrs.at("qpo.slots." + pair.receiver);
  fill_pattern(buf, kSmokeBytes, pair.seed + 7);
  args.op = IBV_WR_RDMA_WRITE;
  args.wr_id += 1;
  // Into the receiver's last slot (its send buffer), which no receive uses.
  args.remote_addr = target.addr + static_cast<uint64_t>(b.slots_count - 1) * b.slot_size;
  args.rkey = target.rkey;
  if (int e = post_one(st, a, pair.receiver, b, args)) return "ibv_post_send(RDMA_WRITE) failed: " + verbs::errno_name(e);
  return wait_send(st, a, args.wr_id, timeout_ms);
}

std::string smoke_receive(RunState& st, const SmokePair& pair, int timeout_ms) {
  auto& b = st.qps.at(pair.receiver);
  uint32_t qpn = b.qp->get()->qp_num;
  auto wc = st.completions.wait_if(b.recv_cq, [&](const ibv_wc& w) { return is_receive_of(w, qpn); }, timeout_ms);
  if (!wc)
    return "no receive completion on '" + b.spec->name + "' within " + std::to_string(timeout_ms) + " ms" +
           describe_async_events(st);
  auto problem = consume_receive(st, b, *wc, [&](const ibv_wc& w, const uint8_t* data) -> std::string {
    uint32_t expect_len = kSmokeBytes + (is_ud(b) ? 40 : 0);
    if (w.byte_len != expect_len) return "received " + std::to_string(w.byte_len) + " bytes, expected " + std::to_string(expect_len);
    if (!matches_pattern(data, kSmokeBytes, pair.seed)) return "received data differs from what was sent";
    return "";
  });
  if (!problem.empty() || !pair.rdma_write) return problem;
  // UC completes at the sender before the data lands, and the sender may be another
  // process: poll the target memory until the pattern shows up.
  auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  while (!matches_pattern(send_buffer(b), kSmokeBytes, pair.seed + 7)) {
    if (Clock::now() > deadline) return "RDMA WRITE data did not arrive intact within " + std::to_string(timeout_ms) + " ms";
    std::this_thread::yield();
  }
  return "";
}

// ---- workloads -------------------------------------------------------------------------

ibv_wr_opcode opcode_of(const std::string& op) {
  if (op == "send_with_imm") return IBV_WR_SEND_WITH_IMM;
  if (op == "rdma_write") return IBV_WR_RDMA_WRITE;
  if (op == "rdma_write_with_imm") return IBV_WR_RDMA_WRITE_WITH_IMM;
  if (op == "rdma_read") return IBV_WR_RDMA_READ;
  if (op == "atomic_cmp_swp") return IBV_WR_ATOMIC_CMP_AND_SWP;
  if (op == "atomic_fetch_add") return IBV_WR_ATOMIC_FETCH_AND_ADD;
  return IBV_WR_SEND;
}

bool consumes_receive(ibv_wr_opcode op) {
  return op == IBV_WR_SEND || op == IBV_WR_SEND_WITH_IMM || op == IBV_WR_RDMA_WRITE_WITH_IMM;
}
bool is_atomic(ibv_wr_opcode op) { return op == IBV_WR_ATOMIC_CMP_AND_SWP || op == IBV_WR_ATOMIC_FETCH_AND_ADD; }

// One side of one workload, advanced without blocking so several run interleaved.
struct Task {
  virtual ~Task() = default;
  virtual bool step(RunState& st) = 0;  // true when it made progress
  bool done = false;
  std::string error;
};

// The last value of `field` the QP's bring-up sets (literal or default), or `fallback`.
uint64_t bring_up_value(const scenario::Qp& q, const char* field, uint64_t fallback) {
  for (auto it = q.transitions.rbegin(); it != q.transitions.rend(); ++it)
    if (const auto* a = it->attr(field); a && a->symbol == scenario::Symbol::None && it->bring_up) return a->number;
  return fallback;
}

struct InitiatorTask : Task {
  const scenario::Workload& w;
  QpState& q;
  ibv_wr_opcode op;
  ibv_sge sge{};
  uint32_t depth = 1, ord = 0;
  uint64_t posted = 0, completed = 0;
  // Each WR's time from post to completion (a QP completes its sends in order, so a ring of
  // `depth` post times is enough); the first kMaxSamples make the latency figures.
  static constexpr size_t kMaxSamples = 1 << 20;
  std::vector<uint64_t> posted_at;
  std::vector<double> latency_us;
  Clock::time_point start = Clock::now();
  double seconds = 0;
  std::string outcome;
  dataplane::SendQueueNudge nudge;

  // IBV_WC_RETRY_EXC_ERR arrives after retry_cnt retransmissions, each after the local ACK
  // timeout 4.096 us * 2^timeout: compare what the device took with that prediction.
  std::string retry_timing() const {
    uint64_t timeout = bring_up_value(*q.spec, "timeout", 14), retries = bring_up_value(*q.spec, "retry_cnt", 7);
    double predicted_ms = static_cast<double>(retries + 1) * 4.096e-3 * static_cast<double>(1ULL << timeout);
    double took_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    char buf[200];
    std::snprintf(buf, sizeof buf, " after %.0f ms (predicted (retry_cnt %llu + 1) x 4.096 us x 2^%llu = %.0f ms)",
                  took_ms, static_cast<unsigned long long>(retries), static_cast<unsigned long long>(timeout),
                  predicted_ms);
    return buf;
  }

  // `seed`: the pattern the plan gave this workload's bytes (plan/timeline_planner.h).
  InitiatorTask(RunState& st, const scenario::Workload& wl, uint32_t seed)
      : w(wl), q(st.qps.at(wl.qp.name)), op(opcode_of(wl.op)), nudge(q.qp->extended(), q.spec->type_name) {
    verbs::Mr* local = w.local_mr ? st.mrs.at(w.local_mr.name) : q.slots;
    uint8_t* bytes = local->data() + (w.local_mr ? w.offset : 0);
    sge = {reinterpret_cast<uintptr_t>(bytes), static_cast<uint32_t>(w.size), local->get()->lkey};
    fill_pattern(bytes, w.size, seed);
    if (op == IBV_WR_RDMA_READ) std::memset(bytes, 0, w.size);
    depth = std::max(1u, std::min(q.spec->cap.max_send_wr, 16u));
    // Unreliable transports drop what finds no receive: stay within what the peer pre-posted.
    if (consumes_receive(op) && q.spec->type_name != "RC") depth = 1;
    if (is_atomic(op)) depth = 1;  // cmp_swp i -> i+1 must run in order
    ord = ordinal_of(st, q.spec->name);
    posted_at.resize(depth);
    latency_us.reserve(std::min<uint64_t>(w.iterations, kMaxSamples));
  }

  bool step(RunState& st) override {
    bool progress = false;
    const std::string& peer_name = q.spec->connect.name;
    const RemoteQp& peer = st.dir.qps.at(peer_name);
    while (posted < w.iterations && posted - completed < depth) {
      SendArgs a;
      a.op = op;
      a.sge = &sge;
      a.wr_id = make_wr_id(WrKind::Work, ord, static_cast<uint32_t>(posted));
      if (w.remote_mr) {
        const auto& r = st.dir.mrs.at(w.remote_mr.name);
        a.remote_addr = r.addr + w.offset;
        a.rkey = r.rkey;
      }
      a.compare_add = op == IBV_WR_ATOMIC_FETCH_AND_ADD ? 1 : posted;
      a.swap = posted + 1;
      if (int e = post_one(st, q, peer_name, peer, a)) {
        error = "ibv_post_send(" + q.spec->name + ", IBV_WR_" + util::to_upper(w.op) + ") failed: " + verbs::errno_name(e);
        done = true;
        return true;
      }
      posted_at[posted % depth] = dataplane::clock::ticks();
      ++posted;
      progress = true;
    }
    auto wc = st.completions.try_take(q.send_cq, [&](const ibv_wc& c) {
      return (c.wr_id & 0xFFFFFFFF00000000ULL) == make_wr_id(WrKind::Work, ord, 0);
    });
    nudge.observe(posted - completed, wc.has_value(), dataplane::clock::ticks());
    if (!wc) return progress;
    if (wc->status != IBV_WC_SUCCESS) {
      std::string status = wc_status_name(wc->status);
      if (w.expect_status && *w.expect_status == status) {
        outcome = "completion status " + status + ", as the scenario expects";
        if (wc->status == IBV_WC_RETRY_EXC_ERR) outcome += retry_timing();
      }
      else
        error = "completion " + std::to_string(completed) + " on QP '" + q.spec->name + "' has status " + status +
                (w.expect_status ? "; expected " + *w.expect_status : "");
      done = true;
      return true;
    }
    if (latency_us.size() < kMaxSamples)
      latency_us.push_back(dataplane::clock::to_us(dataplane::clock::ticks() - posted_at[completed % depth]));
    if (++completed == w.iterations) {
      seconds = std::chrono::duration<double>(Clock::now() - start).count();
      if (w.expect_status) error = "all completions succeeded; expected " + *w.expect_status;
      done = true;
    }
    return true;
  }
};

// The responder side of a send-type workload: take each receive, check it, re-post.
struct ReceiverTask : Task {
  const scenario::Workload& w;
  QpState& q;
  uint64_t received = 0;
  uint32_t expect_len;
  bool with_data;
  uint32_t seed;

  uint32_t sender_qpn = 0;  // UD fan-in: several senders share one receiver; src_qp tells them apart
  // UD and UC drop what they cannot deliver: once the stream has gone quiet for `idle`, the
  // receiver stops and reports the loss instead of waiting for messages that will never come.
  bool unreliable = false;
  std::chrono::milliseconds idle{2000};
  Clock::time_point last_rx = Clock::now();

  ReceiverTask(RunState& st, const scenario::Workload& wl, uint32_t data_seed)
      : w(wl), q(st.qps.at(st.scenario->qp(wl.qp.name)->connect.name)), seed(data_seed) {
    with_data = opcode_of(w.op) != IBV_WR_RDMA_WRITE_WITH_IMM;
    expect_len = with_data ? static_cast<uint32_t>(w.size) + (is_ud(q) ? 40 : 0) : 0;
    sender_qpn = st.dir.qps.at(w.qp.name).qpn;
    unreliable = q.spec->type_name == "UD" || q.spec->type_name == "UC";
  }

  bool step(RunState& st) override {
    uint32_t qpn = q.qp->get()->qp_num;
    bool ud = is_ud(q);
    auto wc = st.completions.try_take(
        q.recv_cq, [&](const ibv_wc& c) { return is_receive_of(c, qpn) && (!ud || c.src_qp == sender_qpn); });
    if (!wc) {
      if (unreliable && received > 0 && Clock::now() - last_rx > idle) {
        done = true;
        return true;
      }
      return false;
    }
    last_rx = Clock::now();
    error = consume_receive(st, q, *wc, [&](const ibv_wc& c, const uint8_t* data) -> std::string {
      if (!with_data) return "";
      if (c.byte_len != expect_len)
        return "received " + std::to_string(c.byte_len) + " bytes, expected " + std::to_string(expect_len);
      return matches_pattern(data, w.size, seed) ? "" : "received data differs from what was sent";
    });
    if (!error.empty() || ++received == w.iterations) done = true;
    return true;
  }
};

bool initiator_here(const RunState& st, const scenario::Workload& w) { return st.qps.count(w.qp.name) > 0; }
bool responder_here(const RunState& st, const scenario::Workload& w) {
  const auto* q = st.scenario->qp(w.qp.name);
  return q && st.qps.count(q->connect.name) > 0;
}

report::StepResult step_result(const RunState& st, const std::string& verb, const std::string& object,
                               const std::string& detail) {
  report::StepResult r;
  r.host = st.host;
  r.phase = "traffic";
  r.verb = verb;
  r.object = object;
  r.detail = detail;
  return r;
}

// "; the device left a send unprocessed ..." when the nudge rang, else "".
std::string nudged(const InitiatorTask& t) {
  std::string d = t.nudge.describe();
  return d.empty() ? d : "; " + d;
}

std::string workload_detail(const scenario::Workload& w) {
  return "IBV_WR_" + util::to_upper(w.op) + " x" + std::to_string(w.iterations) + ", " + std::to_string(w.size) + " B";
}

}  // namespace

bool smoke_step(RunState& st, const RunOptions& o, const plan::Step& step) {
  const auto& pair = step.smoke;
  bool send = step.kind == plan::StepKind::SmokeSend;
  std::string detail = std::string(pair.rdma_write ? "SEND + RDMA WRITE " : "SEND ") + pair.sender + " -> " +
                       pair.receiver + ", " + std::to_string(kSmokeBytes) + " B";
  auto& r = run_step(st, st.host, "traffic", step.verb, step.object, detail, [&] {
    auto problem = send ? smoke_send(st, pair, o.timeout_ms) : smoke_receive(st, pair, o.timeout_ms);
    if (!problem.empty()) throw std::runtime_error(problem);
  });
  if (r.status == report::StepStatus::Failed) return false;
  if (!send) r.message = "data checked";
  return true;
}

bool prepare_workload(RunState& st, const plan::Step& step) {
  const auto* w = st.scenario->workload(step.workload);
  auto* m = st.mrs.at(step.object);
  auto& r = run_step(st, st.host, "traffic", "prepare", step.object, w->name, [&] {
    uint8_t* at = m->data() + w->offset;  // validation keeps offset + size inside the MR
    size_t room = m->length() - w->offset;
    if (step.fill_remote) fill_pattern(at, std::min<size_t>(room, w->size), step.data_seed);
    else std::memset(at, 0, std::min<size_t>(room, std::max<uint64_t>(w->size, 8)));
  });
  r.message = step.fill_remote ? "filled with the pattern the read expects" : "zeroed";
  return true;
}

bool run_workloads(RunState& st, const RunOptions& o, const std::vector<const plan::Step*>& steps) {
  std::vector<std::unique_ptr<Task>> tasks;
  std::vector<InitiatorTask*> initiators;
  for (const plan::Step* step : steps) {
    const auto& w = *st.scenario->workload(step->workload);
    if (!w.script.empty()) {
      // Every host takes part, with or without workers in it: the hosts meet at its barriers.
      st.report.current_step = step->index;
      if (!run_lua_workload(st, w, o)) return false;
      continue;
    }
    if (initiator_here(st, w)) {
      auto t = std::make_unique<InitiatorTask>(st, w, step->data_seed);
      initiators.push_back(t.get());
      tasks.push_back(std::move(t));
    }
    if (responder_here(st, w) && consumes_receive(opcode_of(w.op)) && !w.expect_status) {
      auto t = std::make_unique<ReceiverTask>(st, w, step->data_seed);
      t->idle = std::chrono::milliseconds(std::max(2000, o.timeout_ms / 4));
      tasks.push_back(std::move(t));
    }
  }
  // One loop drives every task: a host can be initiator of one workload and responder of
  // another at the same time without threads sharing a CQ.
  auto last_progress = Clock::now();
  StallWatch stall(st);
  bool all_done = tasks.empty();
  while (!all_done) {
    if (stop_requested()) {
      st.report.fail("interrupted (SIGINT) during traffic; tore down");
      return false;
    }
    bool progress = false;
    all_done = true;
    for (auto& t : tasks) {
      if (t->done) continue;
      progress |= t->step(st);
      all_done &= t->done;
      if (!t->error.empty()) break;
    }
    bool failed = false;
    for (auto& t : tasks) failed |= !t->error.empty();
    if (failed) break;
    stall.observe(progress, Clock::now());
    if (progress) last_progress = Clock::now();
    else if (Clock::now() - last_progress > std::chrono::milliseconds(o.timeout_ms)) break;
    else std::this_thread::yield();
  }
  bool ok = true;
  for (const plan::Step* step : steps) {
    const auto& w = *st.scenario->workload(step->workload);
    for (auto& t : tasks) {
      auto* init = dynamic_cast<InitiatorTask*>(t.get());
      auto* recv = dynamic_cast<ReceiverTask*>(t.get());
      if (!(init && &init->w == &w) && !(recv && &recv->w == &w)) continue;
      auto r = step_result(st, init ? "workload" : "workload receive", init ? w.qp.name : recv->q.spec->name,
                           w.name + ": " + workload_detail(w));
      r.plan_step = step->index;
      if (!t->error.empty()) r.message = t->error;
      else if (!t->done)
        r.message = "no progress for " + std::to_string(o.timeout_ms) + " ms (" +
                    (init ? std::to_string(init->completed) : std::to_string(recv->received)) + " of " +
                    std::to_string(w.iterations) + " done" +
                    (init ? ", " + std::to_string(init->posted - init->completed) + " posted and not completed; " +
                                stall.describe(init->q) + nudged(*init) + describe_async_events(st)
                          : "") +
                    ")";
      if (!r.message.empty()) {
        r.status = report::StepStatus::Failed;
        st.report.fail("workload '" + w.name + "': " + r.message);
        ok = false;
      } else if (init && !init->outcome.empty()) {
        r.status = report::StepStatus::ExpectedFailure;
        r.message = init->outcome;
      } else if (init) {
        char buf[160];
        std::snprintf(buf, sizeof buf, "%.3f s, %.1f kmsg/s, %.2f MB/s", init->seconds,
                      w.iterations / init->seconds / 1e3, static_cast<double>(w.iterations) * w.size / init->seconds / 1e6);
        r.message = buf + nudged(*init);
        r.micros = init->seconds * 1e6;
        auto result = std::make_shared<report::WorkloadResult>();
        result->name = w.name;
        result->summary = op_summary(w.size, w.iterations, init->seconds, init->latency_us);
        r.workload = std::move(result);
      } else if (recv->received < w.iterations) {
        char buf[200];
        std::snprintf(buf, sizeof buf, "%llu of %llu received (%.1f%% lost: %s is unreliable), data of each checked",
                      static_cast<unsigned long long>(recv->received), static_cast<unsigned long long>(w.iterations),
                      100.0 * static_cast<double>(w.iterations - recv->received) / static_cast<double>(w.iterations),
                      recv->q.spec->type_name.c_str());
        r.message = buf;
        r.status = report::StepStatus::Warning;
      } else {
        r.message = std::to_string(recv->received) + " receives, data checked";
      }
      st.report.add(r);
    }
  }
  return ok;
}

bool verify_workload(RunState& st, const plan::Step& step) {
  const auto& w = *st.scenario->workload(step.workload);
  ibv_wr_opcode op = opcode_of(w.op);
  std::string problem;
  if (op == IBV_WR_RDMA_READ) {
    auto& q = st.qps.at(w.qp.name);
    verbs::Mr* local = w.local_mr ? st.mrs.at(w.local_mr.name) : q.slots;
    if (!matches_pattern(local->data() + (w.local_mr ? w.offset : 0), w.size, step.data_seed))
      problem = "read data differs from the remote MR";
  } else if (is_atomic(op)) {
    uint64_t v;
    std::memcpy(&v, st.mrs.at(w.remote_mr.name)->data() + w.offset, 8);
    if (v != w.iterations)
      problem = "counter is " + std::to_string(v) + " after " + std::to_string(w.iterations) + " atomics";
  } else if (!matches_pattern(st.mrs.at(w.remote_mr.name)->data() + w.offset, w.size, step.data_seed)) {
    problem = "remote MR does not hold the written data";
  }
  auto r = step_result(st, "verify", step.object, w.name + ": " + workload_detail(w));
  r.phase = "verify";
  if (problem.empty()) r.message = "data checked";
  else {
    r.status = report::StepStatus::Failed;
    r.message = problem;
    st.report.fail("workload '" + w.name + "': " + problem);
  }
  st.report.add(r);
  return problem.empty();
}

}  // namespace qpo::exec
