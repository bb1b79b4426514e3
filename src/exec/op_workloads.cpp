// Op workloads (`op: rdma_write`, `send`, `atomic_cmp_swp`, ...) on the data path: the
// initiator side is one stream of `iterations` WRs on its QP; the responder side of send-type
// ops is one receive stream per receiving QP, checking each message against the pattern of the
// workload that sent it (UD fan-in: several senders, told apart by src_qp). Each side runs in
// its own thread of the stage's set (exec/stage_sides.h, with the scripts' conductor and
// workers) and reads through the run's CQ router, so a host can be initiator of one workload
// and responder of another at once, and QPs that share a CQ do not take each other's completions.
// Writes, reads and atomics are checked afterwards by their plan's verify step.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <span>
#include <unordered_map>

#include "dataplane/clock.h"
#include "dataplane/error.h"
#include "dataplane/op.h"
#include "dataplane/pattern.h"
#include "dataplane/stream.h"
#include "exec/async_events.h"
#include "exec/endpoints.h"
#include "exec/external_perftest.h"
#include "exec/lua_workload.h"
#include "exec/external_pingpong.h"
#include "exec/memory_windows.h"
#include "exec/multicast.h"
#include "exec/stage_sides.h"
#include "exec/stall_watch.h"
#include "exec/directory_names.h"
#include "exec/steps.h"
#include "spec/providers.h"
#include "verbs/qp_control.h"
#include "exec/workload_results.h"
#include "plan/plan.h"
#include "util/quantities.h"
#include "util/cpu_pin.h"
#include "util/strings.h"
#include "util/wc_status_names.h"

namespace qpo::exec {

namespace {

using dataplane::Op;
using dataplane::op_info;

constexpr uint32_t kImmediate = 0x51504f;  // "QPO"
constexpr double kProgressEvery = 0.25;    // seconds between the streams' progress callbacks

// IBV_WC_RETRY_EXC_ERR arrives after retry_cnt retransmissions, each after the local ACK
// timeout 4.096 us * 2^timeout: compare what the device took with that prediction, from the
// values the QP holds (ibv_query_qp), whichever step set them.
std::string retry_timing(const QpState& q, double took_seconds) {
  char buf[200];
  ibv_qp_attr a;
  if (verbs::query_qp(q.qp->get(), a, IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT) != 0) {
    std::snprintf(buf, sizeof buf, " after %.0f ms", took_seconds * 1e3);
    return buf;
  }
  double predicted_ms = (a.retry_cnt + 1) * 4.096e-3 * static_cast<double>(1ULL << a.timeout);
  std::snprintf(buf, sizeof buf, " after %.0f ms (predicted (retry_cnt %u + 1) x 4.096 us x 2^%u = %.0f ms)",
                took_seconds * 1e3, static_cast<unsigned>(a.retry_cnt), static_cast<unsigned>(a.timeout), predicted_ms);
  return buf;
}

// A stream's last progress report and, once it has been quiet a while, what the devices did
// (StallWatch): the words of a timeout.
struct Watch {
  explicit Watch(const RunState& st) : stall(st) {}
  StallWatch stall;
  uint64_t done = 0, posted = 0;
  std::vector<std::string> notes;  // the nudge's, from the report before a timeout
  void observe(const dataplane::StreamProgress& p, uint64_t now_done) {
    stall.observe(now_done != done || p.posted != posted, StallWatch::Clock::now());
    done = now_done;
    posted = p.posted;
    if (!p.notes.empty()) notes = p.notes;
  }
};

// What a group's peak needs of each worker's stream.
struct WorkerRun {
  dataplane::StreamTimeline timeline;
  double bw_peak = 0;  // perftest's (dataplane::peak_ticks_per_op): 0 when not measured
};

struct Initiator {
  const plan::Step* step;
  const plan::WorkloadParams* w;
  QpState* q;
  dataplane::Endpoint ep;
  dataplane::StreamConfig cfg;
  dataplane::CqAccess access;
  dataplane::StreamResult result;
  // Its worker's stream (every lane): its timeline and perftest's peak of it. The member's own
  // when it is alone in its worker; a group's peak adds up its workers' timelines.
  std::shared_ptr<const WorkerRun> worker;
  bool alone_in_worker = true;
  std::unique_ptr<Watch> watch;
  std::string error;
  bool timed_out = false;
  bool by_other_lane = false;  // its worker stopped for another QP's error (workload_results.h)
};

// One workload arriving at a receiving QP.
struct Incoming {
  const plan::Step* step;
  const plan::WorkloadParams* w;
  QpState* receiver = nullptr;
  uint32_t sender_qpn = 0;
  bool with_data = true;  // write_with_imm consumes a receive but lands its data elsewhere
  uint64_t received = 0;
  std::string problem;
  // send_with_inv: the window whose rkey the receive must report invalidated (IBV_WC_WITH_INV).
  std::string window;
  plan::ObjectId window_id = plan::kNoObject;  // its id: a record on this host, or only its published rkey
  uint32_t window_rkey = 0;
  uint32_t with_inv_flag = IBV_WC_WITH_INV;  // the wc_flags bit that says so in this provider's completions
  // op recv: a sender outside the scenario (any QP number; its bytes unknown, only sizes checked).
  bool from_outside = false;
};

// The receive side of one receive queue: a QP's own, or an SRQ with every QP on it that
// this step receives on (one stream, a lane per QP: the SRQ's pool is not shared across threads).
struct Responder {
  std::string unit;  // the QP's or the SRQ's name
  QpState* q;        // the first receiving QP (for messages)
  std::vector<std::unique_ptr<dataplane::Endpoint>> eps;
  std::vector<QpState*> lanes;  // eps[i]'s QP
  dataplane::StreamConfig cfg;
  dataplane::CqAccess access;
  std::vector<Incoming> in;
  bool unreliable = false;
  bool any = false;
  std::unique_ptr<Watch> watch;
  std::string error;
  bool timed_out = false;

  // UD: the sender's QP number tells workloads apart; a connected QP hears one peer, whose
  // workloads arrive in step order.
  Incoming* incoming_for(const ibv_wc& wc) {
    bool ud = q->facts->type == spec::QpType::UD;
    Incoming* last = nullptr;
    Incoming* outside = nullptr;  // op recv: a sender this step does not name, up to its count
    for (auto& i : in) {
      if (i.receiver->qp->get()->qp_num != wc.qp_num) continue;
      if (ud && i.from_outside) {
        if (!outside && i.received < i.w->iterations) outside = &i;
        continue;
      }
      if (ud ? i.sender_qpn == wc.src_qp : i.received < i.w->iterations) return &i;
      last = &i;
    }
    return ud ? outside : last;
  }

  // A send with invalidate: the completion says so, and names the window's rkey.
  static void check_invalidated(Incoming& i, const ibv_wc& wc) {
    if (!(wc.wc_flags & i.with_inv_flag))
      i.problem = std::string("the receive completed without ") +
                  (i.with_inv_flag == IBV_WC_WITH_INV ? std::string("IBV_WC_WITH_INV")
                                                      : "IBV_WC_WITH_INV (this provider's " + util::hex(i.with_inv_flag) + ")") +
                  " (wc_flags " + util::hex(wc.wc_flags) + "): window '" + i.window + "' was not invalidated";
    else if (wc.invalidated_rkey != i.window_rkey)
      i.problem = "the receive invalidated rkey " + util::hex(wc.invalidated_rkey) + ", window '" + i.window +
                  "' has rkey " + util::hex(i.window_rkey);
    if (!i.problem.empty())
      throw dataplane::DataplaneError(dataplane::DataplaneError::Kind::Data, i.receiver->facts->name, i.problem);
  }

  bool all_received() const {
    for (const auto& i : in)
      if (i.received < i.w->iterations) return false;
    return true;
  }

  void on_receive(const ibv_wc& wc, const uint8_t* data, uint32_t len) {
    any = true;
    Incoming* i = incoming_for(wc);
    if (!i) return;  // a sender this step does not run (UD: anyone with the qkey may send)
    ++i->received;
    if (!i->window.empty()) check_invalidated(*i, wc);
    if (!i->with_data || !data) return;
    if (len != i->w->size)
      i->problem = "received " + std::to_string(len) + " bytes, expected " + std::to_string(i->w->size);
    else if (!i->from_outside && dataplane::check_pattern(data, len, i->step->extra().data_seed) >= 0)
      i->problem = "received data differs from what was sent";
    if (!i->problem.empty())
      throw dataplane::DataplaneError(dataplane::DataplaneError::Kind::Data, i->receiver->facts->name, i->problem);
  }
};

bool initiator_here(const RunState& st, const plan::WorkloadRun& run) { return st.qps.has(run.qp); }
// The QPs on this host that receive what `run` sends: its peer, or the members of its multicast group.
std::vector<QpState*> receivers_here(RunState& st, const plan::WorkloadRun& run) {
  std::vector<QpState*> out;
  for (auto id : run.receiver_ids)
    if (auto* q = st.qps.find(id)) out.push_back(q);
  return out;
}

// `halt`: set when Ctrl-C or another side fails; the stream stops posting and drains.
void common(dataplane::StreamConfig& c, const RunOptions& o, const std::atomic<bool>* halt) {
  executor_stream(c);
  c.timeout_ms = o.timeout_ms;
  c.stop = halt;
  c.progress_every = kProgressEvery;
}

// A UD message is one packet, at most the port's active MTU: a larger send is dropped on the
// way while the sender's completion may still say success (rxe), so neither side runs it.
void refuse_ud_above_mtu(const QpState& q, const plan::WorkloadParams& w) {
  if (q.facts->type != spec::QpType::UD) return;
  uint64_t mtu = 128u << q.device->ctx().port_attr().active_mtu;
  if (w.size <= mtu) return;
  throw std::runtime_error("a UD message is one packet: size " + std::to_string(w.size) + " B is above the active MTU " +
                           std::to_string(mtu) + " B of QP '" + q.facts->name + "''s port; nothing sent");
}

std::unique_ptr<Initiator> make_initiator(RunState& st, const plan::Step& step, const plan::WorkloadRun& run,
                                          const RunOptions& o, const std::atomic<bool>* halt, const EndpointMrs& mrs) {
  const plan::WorkloadParams& w = run.params;
  auto t = std::make_unique<Initiator>();
  t->step = &step;
  t->w = &w;
  t->q = &st.qps.at(run.qp);
  refuse_ud_above_mtu(*t->q, w);
  t->ep = own_endpoint(st, *t->q, run.mcast_group >= 0 ? plan::kNoObject : t->q->facts->peer, &mrs);
  if (const auto* g = st.plan->mcast_group_at(run.mcast_group)) {
    t->ep.peer_name = g->name;  // every member: the group's GID, QPN 0xffffff, the group's qkey
    t->ep.peer_qpn = 0xffffff;
    t->ep.peer_qkey = g->qkey;
    t->ep.peer_ah = mcast_ah(st, *t->q, *g);
  }
  t->watch = std::make_unique<Watch>(st);
  auto& c = t->cfg;
  common(c, o, halt);
  c.peak = true;  // perftest's BW peak of the worker's stream (its best window of WRs)
  Op op = w.op;  // an op workload (scripts run elsewhere)
  const auto& info = op_info(op);
  c.op = op;
  c.size = static_cast<uint32_t>(w.size);
  c.iterations = w.iterations;
  c.depth = std::max(1u, std::min(t->q->facts->cap.max_send_wr, 16u));
  // Unreliable transports drop what finds no receive: stay within what the peer keeps posted.
  if (info.consumes_recv && t->q->facts->type != spec::QpType::RC) c.depth = 1;
  if (info.atomic) c.depth = 1;  // cmp_swp i -> i+1 must run in order
  c.signal_every = 1;
  c.keep_latency = true;
  c.local_mr = !w.local_mr.empty() ? w.local_mr : slot_mr_name(*t->q);
  c.local_offset = !w.local_mr.empty() ? w.offset : 0;
  if (info.remote) {
    c.remote_mr = w.remote_mr;
    // A peer of given values (exchange values): its buffer goes by the external's name.
    if (const auto& run = st.plan->workload_of(step); c.remote_mr.empty() && !run.external.empty()) c.remote_mr = run.external;
    c.remote_offset = w.offset;
    // A deliberate access past a memory window's end: the responder is to refuse it
    // (IBV_WC_REM_ACCESS_ERR), so the data path's own range check must let it through.
    if (!w.expect_status.empty() && st.plan->workload_of(step).remote_is_window && t->ep.remote_mrs.count(c.remote_mr)) {
      auto& remote = t->ep.remote_mrs[c.remote_mr];  // this endpoint's copy
      remote.length = std::max<uint64_t>(remote.length, w.offset + (info.atomic ? 8 : w.size));
    }
  }
  c.imm = kImmediate;
  if (!w.invalidate.empty()) {  // the window's rkey as its last bind published it
    auto mw = st.dir.mrs.find({MrKey::Kind::Window, st.plan->workload_of(step).invalidate_mw});
    if (mw == st.dir.mrs.end())
      throw std::runtime_error("window '" + w.invalidate + "' has no published rkey (no bind before this workload)");
    c.invalidate_rkey = mw->second.rkey;
  }
  if (op == Op::CmpSwap)
    c.hook = [](uint64_t i, dataplane::WrEdit& e) {
      e.compare_add = i;  // the counter the previous one left
      e.swap = i + 1;
      return true;
    };
  c.compare_add = 1;  // fetch_add: +1 each
  if (!w.expect_status.empty()) c.expect_status = util::parse_wc_status(w.expect_status);
  Watch* watch = t->watch.get();
  c.progress = [watch](const dataplane::StreamProgress& p) { watch->observe(p, p.ops); };
  // The bytes it sends: the plan's pattern (a read's destination starts zeroed).
  const auto& mr = dataplane::local_mr(t->ep, c.local_mr);
  uint8_t* bytes = mr.data + c.local_offset;
  size_t n = std::min<size_t>(w.size, mr.length - c.local_offset);
  if (op == Op::Read) std::memset(bytes, 0, n);
  else dataplane::fill_pattern(bytes, n, step.extra().data_seed);
  return t;
}

// The responders of a step's workloads, each found by its unit (a QP, or an SRQ's QPs) without
// a scan: 10,000 receivers are 10,000 units.
struct Responders {
  std::vector<std::unique_ptr<Responder>> all;
  std::map<std::string, Responder*> by_unit;
};

Responder& responder_for(RunState& st, Responders& responders, QpState& receiver, const RunOptions& o,
                         const std::atomic<bool>* halt, const EndpointMrs& mrs) {
  std::string unit = receiver.srq ? "srq " + receiver.srq_state->srq->name() : receiver.facts->name;
  // A lane for `receiver` in its unit's stream (it only receives: no address handle back).
  auto add_lane = [&](Responder& r) {
    for (const auto& e : r.eps)
      if (e->qp == receiver.qp->get()) return;
    r.eps.push_back(std::make_unique<dataplane::Endpoint>(own_endpoint(st, receiver, plan::kNoObject, &mrs)));
    r.lanes.push_back(&receiver);
  };
  if (auto known = responders.by_unit.find(unit); known != responders.by_unit.end()) {
    add_lane(*known->second);
    return *known->second;
  }
  auto r = std::make_unique<Responder>();
  r->unit = unit;
  r->q = &receiver;
  add_lane(*r);
  r->unreliable = receiver.facts->type == spec::QpType::UD || receiver.facts->type == spec::QpType::UC;
  r->watch = std::make_unique<Watch>(st);
  auto& c = r->cfg;
  common(c, o, halt);
  c.op = Op::Recv;
  c.size = 1;  // slots are the executor's (recv_slot_size); each Incoming checks its own size
  use_executor_receives(receiver, c);  // each receive taken is re-posted into its slots
  Responder* self = r.get();
  c.on_receive = [self](const ibv_wc& wc, const uint8_t* data, uint32_t len) { self->on_receive(wc, data, len); };
  c.progress = [self](const dataplane::StreamProgress& p) { self->watch->observe(p, p.recv_ops); };
  c.enough = [self] { return self->all_received(); };  // several senders and lanes: no one count
  if (r->unreliable) {
    // UD and UC drop what they cannot deliver: once the stream has gone quiet for `idle_ms`
    // after the first message, the receiver stops and reports the loss instead of waiting
    // for messages that will never come (within the timeout, which would call it a stall).
    c.until = [self] { return self->any; };
    c.idle_ms = std::min(std::max(2000, o.timeout_ms / 4), o.timeout_ms / 2);
  }
  responders.by_unit.emplace(unit, r.get());
  responders.all.push_back(std::move(r));
  return *responders.all.back();
}

std::string detail_of(const plan::WorkloadParams& w) {
  if (w.op == Op::Recv) return w.name + ": receive only, x" + std::to_string(w.iterations) + ", " + std::to_string(w.size) + " B";
  return w.name + ": IBV_WR_" + util::to_upper(w.op_spelling()) + " x" + std::to_string(w.iterations) + ", " +
         std::to_string(w.size) + " B";
}

report::StepResult line(const RunState& st, const plan::Step& step, const std::string& verb, const std::string& object,
                        const plan::WorkloadParams& w) {
  report::StepResult r;
  r.host = st.host;
  r.phase = "traffic";
  r.verb = verb;
  r.object = object;
  r.detail = detail_of(w);
  r.plan_step = step.index;
  return r;
}

std::string nudged(const std::vector<std::string>& notes) {
  std::string out;
  for (const auto& n : notes) out += "; " + n;
  return out;
}

// "no progress for 1500 ms (0 of 1 done, 1 posted and not completed; QP 'qa' is in RTS; ...)"
std::string stalled(const RunState& st, const RunOptions& o, const Watch& watch, const QpState& q, uint64_t done,
                    uint64_t of, bool sender, const std::string& nudge = "") {
  std::string m = "no progress for " + std::to_string(o.timeout_ms) + " ms (" + std::to_string(done) + " of " +
                  std::to_string(of) + " done";
  if (sender) m += ", " + std::to_string(watch.posted - watch.done) + " posted and not completed";
  return m + "; " + watch.stall.describe(q) + nudge + describe_async_events(st) + ")";
}

// A side that ended early without an error of its own was halted: another side failed.
std::string halted_text(uint64_t done, uint64_t of) {
  return "stopped after " + std::to_string(done) + " of " + std::to_string(of) + ": another side of this step failed";
}

// A failed line that only follows from another one (a lane its worker stopped for another
// QP, a side halted because another side failed) goes to `echoes` instead of the verdict:
// the run's reason is the line that caused it (run_workloads falls back to the first echo).
bool report_initiator(RunState& st, report::RunReport& log, const RunOptions& o, Initiator& t, std::vector<std::string>* echoes) {
  const auto& w = *t.w;
  auto r = line(st, *t.step, "workload", w.qp, w);
  const auto& res = t.result;
  bool echo = false;
  if (t.timed_out) {
    r.message = stalled(st, o, *t.watch, *t.q, t.watch->done, w.iterations, true, nudged(t.watch->notes));
  } else if (!t.error.empty()) {
    r.message = t.error;
    echo = t.by_other_lane;
  } else if (!res.expected && res.tx.ops < w.iterations) {
    r.message = halted_text(res.tx.ops, w.iterations);
    echo = true;
  } else if (!w.expect_status.empty() && !res.expected) r.message = "all completions succeeded; expected " + w.expect_status;
  if (!r.message.empty()) {
    r.status = report::StepStatus::Failed;
    if (echo) echoes->push_back("workload '" + w.name + "': " + r.message);
    else log.fail("workload '" + w.name + "': " + r.message);
    log.add(r);
    return false;
  }
  if (res.expected) {
    r.status = report::StepStatus::ExpectedFailure;
    r.message = "completion status " + std::string(util::wc_status_name(res.expected->status)) + ", as the scenario expects";
    if (res.expected->status == IBV_WC_RETRY_EXC_ERR) r.message += retry_timing(*t.q, res.expected->seconds);
    log.add(r);
    return true;
  }
  double seconds = res.tx.seconds;
  char buf[160];
  std::snprintf(buf, sizeof buf, "%.3f s, %.1f kmsg/s, %.2f MB/s", seconds, w.iterations / seconds / 1e3,
                static_cast<double>(w.iterations) * w.size / seconds / util::kBytesPerMB);
  r.message = buf + nudged(res.notes);
  r.micros = seconds * 1e6;
  auto result = std::make_shared<report::WorkloadResult>();
  result->name = w.name;
  result->group = w.group;
  // A lane shares its worker's stream with the others: its own best moment is not measured.
  result->summary = op_summary(w.size, w.iterations, seconds, t.result.latency_us, t.alone_in_worker ? res.tx.bw_peak : 0);
  if (!t.result.latency_us.empty())  // sorted by op_summary
    result->latency.push_back(report::latency_distribution(t.result.latency_us, static_cast<int64_t>(w.size)));
  r.workload = std::move(result);
  log.add(r);
  return true;
}

// The words for one workload arriving at a responder that stopped: its own problem, the
// stall, or whose problem stopped the receive stream they share.
std::string incoming_failure(const RunState& st, const RunOptions& o, const Responder& rs, const Incoming& in) {
  if (!in.problem.empty()) return in.problem;
  if (rs.timed_out) return stalled(st, o, *rs.watch, *in.receiver, in.received, in.w->iterations, false);
  if (!rs.error.empty()) {
    for (const auto& other : rs.in)
      if (!other.problem.empty())
        return "stopped after " + std::to_string(in.received) + " of " + std::to_string(in.w->iterations) +
               ": receiving for workload '" + other.w->name + "' on the same queue failed";
    return rs.error;
  }
  bool halted = rs.cfg.stop && rs.cfg.stop->load();
  if (in.received < in.w->iterations && (!rs.unreliable || halted)) return halted_text(in.received, in.w->iterations);
  if (in.received == 0 && in.from_outside)
    return "nothing arrived from outside the scenario (" + std::to_string(in.w->iterations) + " expected)";
  if (in.received == 0)  // UD fan-in: the others arrived, this sender's never did
    return "nothing arrived from '" + in.w->qp + "' (" + std::to_string(in.w->iterations) + " sent)";
  return "";
}

bool report_incoming(RunState& st, report::RunReport& log, const RunOptions& o, const Responder& rs, const Incoming& in) {
  const auto& w = *in.w;
  auto r = line(st, *in.step, "workload receive", in.receiver->facts->name, w);
  r.message = incoming_failure(st, o, rs, in);
  if (!r.message.empty()) {
    r.status = report::StepStatus::Failed;
    log.fail("workload '" + w.name + "': " + r.message);
    log.add(r);
    return false;
  }
  if (in.received < w.iterations && !w.mcast.empty()) {  // a group promises every member every message
    r.message = "member of multicast group '" + w.mcast + "' received " + std::to_string(in.received) + " of " +
                std::to_string(w.iterations) + " (data of each checked)";
    r.status = report::StepStatus::Failed;
    log.fail("workload '" + w.name + "': " + in.receiver->facts->name + " " + r.message);
    log.add(r);
    return false;
  }
  if (in.received < w.iterations) {
    char buf[200];
    std::snprintf(buf, sizeof buf, "%llu of %llu received (%.1f%% lost: %s is unreliable), data of each checked",
                  static_cast<unsigned long long>(in.received), static_cast<unsigned long long>(w.iterations),
                  100.0 * static_cast<double>(w.iterations - in.received) / static_cast<double>(w.iterations),
                  in.receiver->facts->type_name.str().c_str());
    r.message = buf;
    r.status = report::StepStatus::Warning;
  } else {
    r.message = in.from_outside
                    ? std::to_string(in.received) + " datagrams of " + std::to_string(w.size) + " B from outside the scenario" +
                          (!w.mcast.empty() ? " (multicast group '" + w.mcast + "')" : "") + ", sizes checked"
                    : std::to_string(in.received) + " receives" + (in.with_data ? ", data checked" : "") +
                          (!w.mcast.empty() ? " (multicast group '" + w.mcast + "')" : "");
    if (!in.window.empty()) {
      r.message += std::string(", ") +
                   (in.with_inv_flag == IBV_WC_WITH_INV ? std::string("IBV_WC_WITH_INV")
                                                        : "IBV_WC_WITH_INV (this provider's " + util::hex(in.with_inv_flag) + ")") +
                   ": rkey " + util::hex(in.window_rkey) + " of window '" + in.window + "' invalidated";
      if (auto* mw = st.mws.find(in.window_id)) mw->bound = false;
    }
  }
  log.add(r);
  return true;
}

// A stop from outside (Ctrl-C, another host's failure) halted every side: each workload's
// line says how far it got, in plan order; a side that met an error of its own before the
// stop reached it keeps its own line with that error. The caller sets the verdict first.
void report_stopped(RunState& st, report::RunReport& log, const RunOptions& o, const std::vector<const plan::Step*>& steps,
                    const std::vector<std::unique_ptr<Initiator>>& initiators,
                    const std::vector<std::unique_ptr<Responder>>& responders, const std::string& why) {
  auto stopped = [&](const plan::Step& step, const std::string& verb, const std::string& object,
                     const plan::WorkloadParams& w, uint64_t done) {
    auto r = line(st, step, verb, object, w);
    r.status = report::StepStatus::Failed;
    r.message = "stopped after " + std::to_string(done) + " of " + std::to_string(w.iterations) + ": " + why;
    log.add(r);
  };
  std::vector<std::string> echoes;  // lanes stopped by another lane's error: their line says so
  for (const plan::Step* step : steps) {
    for (const auto& t : initiators) {
      if (t->step != step) continue;
      if (t->timed_out || !t->error.empty()) report_initiator(st, log, o, *t, &echoes);
      else stopped(*step, "workload", t->w->qp, *t->w, t->result.tx.ops);
    }
    for (const auto& r : responders)
      for (const auto& in : r->in) {
        if (in.step != step) continue;
        if (r->timed_out || !r->error.empty() || !in.problem.empty()) report_incoming(st, log, o, *r, in);
        else stopped(*step, "workload receive", in.receiver->facts->name, *in.w, in.received);
      }
  }
}

// The peak of workers that ran at once (perf.lua's aggregate_peak, for op workloads): the best
// 10 ms of their timelines added up, kept within what their own peaks allow - at least the
// largest (the others add to that moment), at most their sum (bursts of completions reaped
// at once land in one bucket). 0 when a worker's peak was not measured.
double group_peak(const std::vector<const WorkerRun*>& workers) {
  std::vector<const dataplane::StreamTimeline*> timelines;
  double largest = 0, sum = 0;
  for (const auto* w : workers) {
    if (w->bw_peak <= 0 || w->timeline.bytes.empty()) return 0;
    timelines.push_back(&w->timeline);
    largest = std::max(largest, w->bw_peak);
    sum += w->bw_peak;
  }
  if (timelines.empty()) return 0;
  return std::min(std::max(dataplane::timeline_peak(timelines), largest), sum);
}

// Op workloads on a QP group (scenario Workload::group): after the members' lines, one line
// per group with their figures together: the bytes of every member that completed over the
// longest member's time (they ran at once), the latencies of all their WRs.
// The line reports on the last member's plan step, after that step's own lines.
void report_group(RunState& st, report::RunReport& log, const std::string& g, const std::vector<const Initiator*>& members) {
  std::vector<MemberRun> done;
  std::vector<const WorkerRun*> workers;  // each once
  for (const auto* t : members)
    if (t->error.empty() && !t->timed_out && !t->result.expected && t->result.tx.ops >= t->w->iterations) {
      done.push_back({t->w->iterations, t->result.tx.seconds, &t->result.latency_us});
      if (t->worker && std::find(workers.begin(), workers.end(), t->worker.get()) == workers.end())
        workers.push_back(t->worker.get());
    }
  if (done.empty()) return;  // each member's own line says what went wrong
  const auto& first = *members.front()->w;
  auto result = std::make_shared<report::WorkloadResult>();
  result->name = g;
  result->group = g;
  result->aggregate = true;
  dataplane::BandwidthStats together;
  result->summary = group_summary(first.size, done, &together, group_peak(workers));
  std::vector<double> all_latency;
  for (const auto& m : done) all_latency.insert(all_latency.end(), m.latency_us->begin(), m.latency_us->end());
  if (!all_latency.empty())
    result->latency.push_back(report::latency_distribution(all_latency, static_cast<int64_t>(first.size)));
  double seconds = together.seconds, bytes = static_cast<double>(together.bytes), iterations = static_cast<double>(together.ops);
  if (seconds <= 0) return;
  report::StepResult r;
  r.host = st.host;
  r.phase = "traffic";
  r.verb = "workload group";
  r.object = g;
  r.plan_step = members.back()->step->index;
  r.detail = g + ": " + std::to_string(done.size()) + " of " + std::to_string(members.size()) + " QPs, IBV_WR_" +
             util::to_upper(first.op_spelling()) + " x" + std::to_string(first.iterations) + " each, " + std::to_string(first.size) +
             " B";
  char buf[160];
  std::snprintf(buf, sizeof buf, "%.3f s, %.1f kmsg/s, %.2f MB/s aggregate", seconds, iterations / seconds / 1e3,
                bytes / seconds / util::kBytesPerMB);
  r.message = buf;
  r.micros = seconds * 1e6;
  r.workload = std::move(result);
  log.add(r);
}

// The initiators one thread drives: a lane each in one stream (the first member's config:
// the members of a group differ only in QP, MRs and names). Their completions are routed to
// the thread for the step, and back to each QP's own reader afterwards.
struct InitiatorWorker {
  std::vector<Initiator*> members;
  int64_t cpu = -1;  // `pin:`
  dataplane::CqAccess access;
  std::string error;
  bool timed_out = false;
  LaneFailure failed;  // the lane whose error stopped the thread

  void run() {
    if (cpu >= 0)
      if (std::string why = util::pin_this_thread(cpu); !why.empty())
        throw std::runtime_error("workload '" + group_name() + "' pin: " + why);
    std::vector<dataplane::StreamLane> lanes;
    for (auto* t : members) lanes.push_back({&t->ep, nullptr, t->cfg.local_mr, t->cfg.remote_mr});
    dataplane::StreamConfig cfg = members.front()->cfg;
    // perftest's peak needs two timestamps per WR: up to 2^20 WRs (16 MiB), not more.
    cfg.peak = cfg.peak && cfg.iterations * members.size() <= dataplane::kMaxLatencySamples;
    if (members.size() > 1)
      cfg.progress = [this](const dataplane::StreamProgress& p) {
        // The stream counts all lanes: each member is credited an even share (stall messages).
        for (auto* t : members) t->watch->observe(p, p.ops / members.size());
      };
    dataplane::StreamResult r;
    try {
      r = dataplane::run_stream(lanes, cfg, access);
    } catch (const dataplane::DataplaneError& e) {
      if (e.kind() != dataplane::DataplaneError::Kind::Timeout && e.kind() != dataplane::DataplaneError::Kind::Usage)
        failed = {e.qp(), e.wc_status(), e.error()};
      throw;
    }
    auto worker = std::make_shared<const WorkerRun>(WorkerRun{std::move(r.timeline), r.tx.bw_peak});
    for (auto* t : members) {
      t->worker = worker;
      t->alone_in_worker = members.size() == 1;
    }
    for (size_t i = 0; i < members.size(); ++i) {
      auto& res = members[i]->result;
      res = members.size() == 1 ? r : dataplane::StreamResult{};
      if (members.size() == 1) break;
      const auto& lane = r.lanes.at(i);
      res.tx.ops = lane.ops;
      res.tx.bytes = lane.bytes;
      res.tx.seconds = lane.seconds;
      res.latency_us = lane.latency_us;
      res.notes = r.notes;
      res.expected = r.expected;
    }
  }

  std::string group_name() const {
    const auto& w = *members.front()->w;
    return w.group.empty() ? w.name : w.group;
  }

  // What stopped the thread stops each of its members: the QP whose error it was says it,
  // the others that they did not finish because of it (not its error 250 times over).
  void finish(RunState& st) {
    for (auto* t : members) {
      if (t->error.empty() && !error.empty()) {
        t->error = members.size() > 1 ? lane_message(t->w->qp, failed, error) : error;
        t->by_other_lane = members.size() > 1 && stopped_by_other_lane(t->w->qp, failed);
      }
      t->timed_out |= timed_out;
    }
    if (members.size() < 2) return;
    for (auto* t : members)  // back to the QP's own reader
      st.router.assign(t->ep.send_cq, t->ep.qp->qp_num, access_for(st, *t->q, Reader::Sends).owner);
  }
};

// Initiators into threads: each group's members into its `workers:` (at most one per member),
// in order, a contiguous share each; an initiator of a plain workload alone.
std::vector<std::unique_ptr<InitiatorWorker>> initiator_workers(RunState& st,
                                                                std::vector<std::unique_ptr<Initiator>>& initiators) {
  std::vector<std::unique_ptr<InitiatorWorker>> out;
  std::map<std::string, std::vector<Initiator*>> groups;
  std::vector<std::string> order;
  for (auto& t : initiators) {
    const auto& w = *t->w;
    if (w.group.empty()) {
      auto k = std::make_unique<InitiatorWorker>();
      k->members.push_back(t.get());
      k->cpu = util::pin_of(w.pin, 0);
      k->access = t->access;
      out.push_back(std::move(k));
      continue;
    }
    if (!groups.count(w.group)) order.push_back(w.group);
    groups[w.group].push_back(t.get());
  }
  for (const auto& key : order) {
    auto& members = groups[key];
    const auto& w = *members.front()->w;
    size_t n = members.size();
    size_t threads = std::clamp<size_t>(w.workers ? w.workers : 1, 1, n);
    for (size_t k = 0; k < threads; ++k) {
      auto wk = std::make_unique<InitiatorWorker>();
      for (size_t i = k * n / threads; i < (k + 1) * n / threads; ++i) wk->members.push_back(members[i]);
      wk->cpu = util::pin_of(w.pin, k);
      wk->access = wk->members.front()->access;
      if (wk->members.size() > 1)  // every lane's sends to this thread for the step
        for (auto* t : wk->members) st.router.assign(t->ep.send_cq, t->ep.qp->qp_num, wk->access.owner);
      out.push_back(std::move(wk));
    }
  }
  return out;
}

}  // namespace

bool prepare_workload(RunState& st, report::RunReport& log, const plan::Step& step) {
  const auto& run = st.plan->workload_of(step);
  const auto* w = &run.params;
  auto* m = st.mrs.at(step.id);  // the remote MR, or the one behind its window
  uint64_t offset = run.remote_offset;
  auto& r = run_step(log, st.host, "traffic", "prepare", step.object, w->name, [&] {
    uint8_t* at = m->data() + offset;  // validation keeps offset + size inside the MR (and window)
    size_t room = offset < m->length() ? m->length() - offset : 0;  // a window's deliberate overrun stays in the MR
    if (step.extra().fill_remote) dataplane::fill_pattern(at, std::min<size_t>(room, w->size), step.extra().data_seed);
    else std::memset(at, 0, std::min<size_t>(room, std::max<uint64_t>(w->size, 8)));
  });
  r.message = step.extra().fill_remote ? "filled with the pattern the read expects" : "zeroed";
  return true;
}

bool run_workloads(RunState& st, report::RunReport& log, const RunOptions& o, const std::vector<const plan::Step*>& steps) {
  // Ctrl-C, or (hosts as threads) the phase timeout found this host late.
  const StopRequest* told = st.channel ? st.channel->stop_request() : nullptr;
  std::vector<std::unique_ptr<Initiator>> initiators;
  Responders receiving;
  auto& responders = receiving.all;
  std::vector<std::unique_ptr<ExternalPingpong>> externals;
  std::vector<std::unique_ptr<ExternalPerftest>> perftests;
  std::vector<std::unique_ptr<ScriptWorkload>> scripts;  // beside the op workloads, in plan order, on one thread
  std::vector<std::unique_ptr<InitiatorWorker>> workers;  // the initiators' threads
  std::string scripts_error;  // the scripts' conductor's
  bool scripts_timed_out = false;
  // A script prepared (its hosts met once) that will not have its turn tells the others.
  auto abandon_scripts = [&scripts](const std::string& why) {
    for (auto& script : scripts)
      if (!script->ran()) script->skip(why, false);
  };
  const EndpointMrs mrs = endpoint_mrs(st);  // one table for every member of these workloads
  // Every thread of the stage's workloads, the scripts' workers included. Declared after
  // what its threads use: on every path they are joined before any of it goes.
  StageSides sides(told);
  const std::atomic<bool>* halt = sides.halt_flag();
  // The scripts first, in plan order: one that shares a QP or an SRQ with an op workload (or
  // a script beside them) runs now, alone, before anything else of the stage is set up (a
  // stock tool's conversation routes its QP's receives as it is made).
  // A stock tool's conversation with a peer not given by hand: a side of its own.
  auto tool_conversation = [&st](const plan::WorkloadRun& run) -> const plan::ExternalPeer* {
    const auto* e = st.plan->external_of(run.external_peer);
    return e && !e->given() ? e : nullptr;
  };
  for (const plan::Step* step : steps) {
    const auto& run = st.plan->workload_of(*step);
    const auto& w = run.params;
    if (!w.is_script() || tool_conversation(run)) continue;
    // Every host takes part, with or without workers in it: the hosts meet at its barriers.
    auto script = std::make_unique<ScriptWorkload>(st, *step, o);
    if (!script->prepare(log)) {
      abandon_scripts("workload '" + w.name + "' failed");
      return false;
    }
    if (step->extra().script_turn != plan::ScriptTurn::AloneFirst) {
      scripts.push_back(std::move(script));
      continue;
    }
    script->run(told ? &told->requested : nullptr, told ? &told->why : nullptr, false, sides);
    if (!script->report(log, nullptr)) {
      abandon_scripts("workload '" + w.name + "' failed");
      return false;
    }
  }
  for (const plan::Step* step : steps) {
    const auto& run = st.plan->workload_of(*step);
    const auto& w = run.params;
    if (const auto* e = tool_conversation(run)) {  // on its QP alone
      if (e->perftest()) perftests.push_back(std::make_unique<ExternalPerftest>(st, o, *step, halt));
      else externals.push_back(std::make_unique<ExternalPingpong>(st, o, *step, halt));
      continue;
    }
    if (w.is_script()) continue;  // above
    try {
      if (w.op == Op::Recv) {  // receive-only: the QP counts what a sender outside the scenario sends
        auto& q = st.qps.at(run.qp);
        refuse_ud_above_mtu(q, w);
        Incoming in{step, &w, &q, 0, true};
        in.from_outside = true;
        auto& rs = responder_for(st, receiving, q, o, halt, mrs);
        rs.in.push_back(in);
        // The sender is not the run's: it may begin any time within the phase timeout (declared_waits).
        rs.cfg.timeout_ms = std::max(rs.cfg.timeout_ms, o.phase_timeout_ms > 0 ? o.phase_timeout_ms : 120000);
        continue;
      }
      if (initiator_here(st, run)) initiators.push_back(make_initiator(st, *step, run, o, halt, mrs));
      for (QpState* receiver : receivers_here(st, run)) {
        if (!op_info(w.op).consumes_recv || !w.expect_status.empty()) break;
        auto& q = *receiver;
        refuse_ud_above_mtu(q, w);
        Incoming in{step, &w, &q, st.dir.qps.at(run.qp).qpn, w.op != Op::WriteImm};
        if (!w.invalidate.empty()) {  // the window lives on the receiver's side: its rkey is this host's
          in.window = w.invalidate;
          in.window_id = run.invalidate_mw;
          const auto* mw = st.mws.find(in.window_id);
          in.window_rkey = mw ? mw->rkey : st.dir.mrs.at({MrKey::Kind::Window, in.window_id}).rkey;
          in.with_inv_flag = spec::ProviderTable::builtin().completion_flag(provider_of(st), "IBV_WC_WITH_INV", IBV_WC_WITH_INV);
        }
        // Receivers keep a thread per receive queue: the receive config (slot MR, layout) is
        // per QP, so receivers of a group cannot share one stream yet.
        responder_for(st, receiving, q, o, halt, mrs).in.push_back(in);
      }
    } catch (const std::exception& e) {
      log.fail("workload '" + w.name + "': " + e.what());
      abandon_scripts("workload '" + w.name + "' on host " + st.host + " failed");
      return false;
    }
  }
  for (auto& r : responders) {
    uint64_t total = 0;
    for (const auto& in : r->in) total += in.w->iterations;
    r->cfg.rx_iterations = total;  // an upper bound (times the lanes); `enough` ends it exactly
  }
  // The run's router, as for every other reader of these CQs: completions a side polls that
  // are not its own (a flushed receive of its QP, another QP's) wait for their reader. The
  // lanes of one SRQ are read by one stream: their receives go to its owner for the step.
  for (auto& t : initiators) t->access = access_for(st, *t->q, Reader::Sends);
  for (auto& r : responders) {
    r->access = access_for(st, *r->q, Reader::Receives);
    for (const auto& e : r->eps) st.router.assign_receives(e->recv_cq, e->qp->qp_num, r->access.owner);
  }
  // Initiators: the members of a group share `workers:` threads (default one, as perftest -q
  // drives all its QPs from one thread), each thread one stream with a lane per member.
  workers = initiator_workers(st, initiators);
  // A script on a CQ of theirs reads it through the run's router too (its workers' own QPs).
  for (auto& script : scripts)
    if (script->step().extra().script_turn == plan::ScriptTurn::BesideSharedCq) script->route();
  // One thread per side; a side that fails halts the others, as does Ctrl-C.
  for (auto& r : responders)
    sides.start(r->error, r->timed_out, [rs = r.get()] {
      std::vector<dataplane::StreamLane> lanes;
      for (const auto& e : rs->eps) lanes.push_back({e.get(), e->recv_pool.get()});
      dataplane::run_stream(lanes, rs->cfg, rs->access);
    });
  for (auto& wk : workers)
    sides.start(wk->error, wk->timed_out, [k = wk.get()] { k->run(); });
  for (auto& x : externals)
    sides.start(x->error, x->timed_out, [x = x.get()] { x->run(); });
  for (auto& x : perftests)
    sides.start(x->error, x->timed_out, [x = x.get()] { x->run(); });
  // The scripts' conductor: one script after another (every host meets the others in the
  // same rounds), each one's workers started as sides of the stage.
  if (!scripts.empty())
    sides.start(scripts_error, scripts_timed_out, [&] {
      for (auto& script : scripts) {
        if (sides.halted()) {  // the stage halted first: this one does not start, and the hosts hear it
          script->skip(sides.halted_by(), false);
          continue;
        }
        script->run(sides.scripts_cancel(), sides.scripts_cancel_why(), true, sides);
        if (script->failed()) sides.halt();
      }
    });
  sides.wait();
  if (!scripts_error.empty())  // no thread for them: none ran, and that is the run's reason
    for (auto& script : scripts)
      if (!script->ran()) script->skip(scripts_error, true);
  for (auto& wk : workers) wk->finish(st);
  for (auto& r : responders)
    for (size_t i = 0; i < r->eps.size(); ++i) {
      const auto& e = r->eps[i];
      st.router.assign_receives(e->recv_cq, e->qp->qp_num, access_for(st, *r->lanes[i], Reader::Receives).owner);
    }
  if (stop_requested() || (told && told->requested.load(std::memory_order_acquire))) {
    for (auto& x : externals) x->finish(st, log);  // each says how far it got
    for (auto& x : perftests) x->finish(st, log);
  }
  if (stop_requested()) {
    for (auto& script : scripts) script->report(log, nullptr);  // a script's own words first, as when scripts ran alone
    log.fail("interrupted (SIGINT) during traffic; tore down");
    report_stopped(st, log, o, steps, initiators, responders, "interrupted (SIGINT)");
    return false;
  }
  if (told && told->requested.load(std::memory_order_acquire)) {
    // The reason is the abort: an error a side met while the other host was stopping (its
    // QPs torn down) may be a symptom of it. The side's own line still shows that error.
    for (auto& script : scripts) script->report(log, nullptr);
    log.fail(told->why + "; tore down");
    report_stopped(st, log, o, steps, initiators, responders, told->why);
    return false;
  }

  // Op workloads on a QP group: their members here, so that the group's line follows its last.
  std::map<std::string, std::vector<const Initiator*>> groups;
  for (const auto& t : initiators)
    if (!t->w->group.empty()) groups[t->w->group].push_back(t.get());
  // What each step ran, found without a scan per step (10,000 steps of 10,000 sides).
  std::unordered_map<const plan::Step*, std::vector<Initiator*>> sent_by;
  std::unordered_map<const plan::Step*, std::vector<std::pair<const Responder*, const Incoming*>>> received_by;
  for (auto& t : initiators) sent_by[t->step].push_back(t.get());
  for (const auto& r : responders)
    for (const auto& in : r->in) received_by[in.step].emplace_back(r.get(), &in);
  bool ok = true;
  std::vector<std::string> echoes;
  for (const plan::Step* step : steps) {
    const Initiator* last_of_group = nullptr;
    if (auto sent = sent_by.find(step); sent != sent_by.end())
      for (Initiator* t : sent->second) {
        ok &= report_initiator(st, log, o, *t, &echoes);
        if (!t->w->group.empty() && groups[t->w->group].back() == t) last_of_group = t;
      }
    if (auto received = received_by.find(step); received != received_by.end())
      for (const auto& [r, in] : received->second) ok &= report_incoming(st, log, o, *r, *in);
    for (auto& x : externals)
      if (&x->step() == step) ok &= x->finish(st, log);
    for (auto& x : perftests)
      if (&x->step() == step) ok &= x->finish(st, log);
    for (auto& script : scripts)
      if (&script->step() == step) ok &= script->report(log, &echoes);
    if (last_of_group) report_group(st, log, last_of_group->w->group, groups[last_of_group->w->group]);
  }
  if (!ok && !echoes.empty()) log.fail(echoes.front());  // no line of its own failed the run
  return ok;
}

bool verify_workload(RunState& st, report::RunReport& log, const plan::Step& step) {
  const auto& run = st.plan->workload_of(step);
  const auto& w = run.params;
  Op op = w.op;  // Verify follows op workloads only
  std::string problem;
  if (op == Op::Read) {
    auto& q = st.qps.at(run.qp);
    verbs::Mr* local = !w.local_mr.empty() ? st.mrs.at(step.id) : q.slots;  // a read's verify step is on its local MR
    if (dataplane::check_pattern(local->data() + (!w.local_mr.empty() ? w.offset : 0), w.size, step.extra().data_seed) >= 0)
      problem = "read data differs from the remote MR";
  } else if (op_info(op).atomic) {
    uint64_t v;
    std::memcpy(&v, st.mrs.at(step.id)->data() + run.remote_offset, 8);
    if (v != w.iterations)
      problem = "counter is " + std::to_string(v) + " after " + std::to_string(w.iterations) + " atomics";
  } else if (dataplane::check_pattern(st.mrs.at(step.id)->data() + run.remote_offset,
                                      w.size, step.extra().data_seed) >= 0) {
    problem = "remote MR does not hold the written data";
  }
  report::StepResult r;
  r.host = st.host;
  r.phase = "verify";
  r.verb = "verify";
  r.object = step.object;
  r.detail = detail_of(w);
  if (problem.empty()) r.message = "data checked";
  else {
    r.status = report::StepStatus::Failed;
    r.message = problem;
    log.fail("workload '" + w.name + "': " + problem);
  }
  log.add(r);
  return problem.empty();
}

}  // namespace qpo::exec
