#include "dataplane/stream.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <thread>
#include <ctime>
#include <vector>

#include "dataplane/clock.h"
#include "dataplane/error.h"
#include "dataplane/names.h"
#include "dataplane/pattern.h"
#include "dataplane/post.h"
#include "dataplane/send_path.h"
#include "dataplane/rate_pacer.h"
#include "dataplane/send_queue_nudge.h"
#include "dataplane/wait.h"

namespace qpo::dataplane {

namespace {

using clock::kForever;
constexpr int kPollBatch = 16;               // perftest's CTX_POLL_BATCH
constexpr size_t kMaxTimestamps = 1u << 24;  // per-op timestamps beyond this: no peak
constexpr int64_t kMaxTimelineBuckets = 1 << 20;  // 10 ms buckets: ~3 hours

// One QP's send side. The WR templates are built and checked once; a post only rewrites
// wr_id and the signaled flag (and, in hook mode, the fields the hook may change).
struct TxLane {
  Endpoint* ep = nullptr;
  const LocalMr* lmr = nullptr;
  const RemoteMr* rmr = nullptr;
  std::vector<ibv_send_wr> wrs;
  std::vector<ibv_sge> sges;
  uint64_t posted = 0, completed = 0, quota = 0, bytes = 0;
  uint32_t outstanding = 0;
  uint32_t unsignaled = 0;  // WRs since the last signaled one
  uint32_t until_every = 0; // WRs until the next signal_every-th one (counts down, no `%` per WR)
  // Hook mode: WRs the hook chose that are not posted yet (a ring of up to `depth`).
  std::vector<ibv_send_wr> staged_wr;
  std::vector<ibv_sge> staged_sge;
  size_t staged_head = 0, staged_count = 0;
  uint64_t hook_next = 0;  // the next WR to ask the hook about
  bool hook_ended = false;
  // UD/UC: rings the doorbell again when the device leaves the queue alone (send_queue_nudge.h).
  SendQueueNudge nudge{nullptr, IBV_QPT_RC};
  uint64_t nudge_seen = 0;  // `completed` at the nudge's last look
  uint64_t first_post = 0, last_done = 0;  // ticks: the lane's own time
  std::vector<uint64_t> lat_posted, lat_done;  // keep_latency: per WR of this lane
};

struct RxUnit {  // one receive queue: a QP's RQ, or an SRQ shared by several lanes
  Endpoint* ep = nullptr;
  RecvPool* pool = nullptr;
};

struct Cq {
  CqHandle h;
  ibv_comp_channel* channel = nullptr;
};

class Engine {
 public:
  Engine(std::span<const StreamLane> lanes, const StreamConfig& cfg, const CqAccess& access)
      : cfg_(cfg), access_(access) {
    if (lanes.empty()) throw DataplaneError(DataplaneError::Kind::Usage, "", "stream needs at least one QP");
    tx_ = cfg.op != Op::Recv;
    rx_ = cfg.op == Op::Recv || cfg.duplex;
    for (const auto& l : lanes) {
      if (!l.ep) throw DataplaneError(DataplaneError::Kind::Usage, "", "stream lane without an endpoint");
      eps_.push_back(l.ep);
    }
    // Configuration and requests first: a script's mistakes read the same with or without a device.
    check_config();
    if (tx_) setup_tx(lanes);
    for (auto* e : eps_)
      if (!e->qp) usage_error(e->qp_name, "has no verbs QP (not brought up?)");
    if (rx_) setup_rx(lanes);
    setup_cqs();
  }

  StreamResult run() {
    if (rx_) post_initial_receives();
    clock::ticks_per_second();  // calibrated before the window: the first call sleeps ~20 ms
    if (cfg_.ready) cfg_.ready();
    timespec mono{};
    clock_gettime(CLOCK_MONOTONIC, &mono);
    start_ = clock::ticks();
    mono_start_ns_ = static_cast<int64_t>(mono.tv_sec) * 1000000000 + mono.tv_nsec;
    last_activity_ = start_;
    last_report_ = start_;
    deadline_ = cfg_.duration > 0 ? start_ + clock::from_seconds(cfg_.duration) : kForever;
    uint32_t burst = cfg_.burst ? cfg_.burst : cfg_.post_list;
    if (cfg_.rate > 0 && tx_) pacer_.start(cfg_.rate / clock::ticks_per_second(), burst, start_);
    // A receiver of a paced sender (rate on a receive-only stream: the sender's) hears nothing
    // between bursts: its wait outlasts twice that gap, whatever timeout_ms says.
    timeout_ms_ = cfg_.timeout_ms;
    if (cfg_.rate > 0 && !tx_) timeout_ms_ = std::max<double>(timeout_ms_, 2000.0 * burst / cfg_.rate);
    loop();
    return finish();
  }

 private:
  // ---- setup --------------------------------------------------------------------------------
  void check_config() {
    const Endpoint& ep = *eps_[0];
    const OpInfo& info = op_info(cfg_.op);
    auto bad = [&](const std::string& m) { usage_error(ep.qp_name, m); };
    if (cfg_.size == 0 && cfg_.op != Op::Write && cfg_.op != Op::Read && cfg_.op != Op::Send) bad("size must be > 0");
    if (info.atomic && cfg_.size != 8) bad(std::string(info.name) + " moves exactly 8 bytes (size = 8)");
    if (cfg_.duration <= 0 && cfg_.iterations == 0) bad("give iterations > 0 or a duration");
    if (cfg_.depth == 0) bad("depth must be > 0");
    if (cfg_.signal_every == 0) bad("signal_every must be >= 1");
    if (cfg_.signal_every > cfg_.depth)
      bad("signal_every " + std::to_string(cfg_.signal_every) + " exceeds depth " + std::to_string(cfg_.depth) +
          ": no WR in the queue would ever complete");
    if (cfg_.post_list == 0 || cfg_.post_list > cfg_.depth)
      bad("post_list must be between 1 and depth (" + std::to_string(cfg_.depth) + ")");
    if (cfg_.rate < 0) bad("rate must be >= 0 WRs per second");
    // A paced stream waits for its tokens, not for completions: sleeping on the channel would
    // oversleep every gap (up to 100 ms) and post one burst per wake-up.
    if (cfg_.rate > 0 && cfg_.events) bad("a rate limit and events = true do not go together: a paced stream wakes at its rate");
    if (cfg_.rate > 0 && cfg_.burst && cfg_.burst < cfg_.post_list)
      bad("burst " + std::to_string(cfg_.burst) + " is smaller than post_list " + std::to_string(cfg_.post_list) +
          ": a list is posted whole");
    if (hooked() && cfg_.op == Op::Recv) bad("a per-WR hook applies to sends, not receives");
    if (cfg_.keep_latency && (cfg_.signal_every != 1 || cfg_.duration > 0))
      bad("per-WR latency needs every WR signaled and an iteration count");
    if (cfg_.events && access_.router)
      for (auto* e : eps_)
        if (!access_.router->exclusive(e->send_cq, access_.owner) || !access_.router->exclusive(e->recv_cq, access_.owner))
          bad("event mode needs CQs this worker does not share with another");
    for (auto* e : eps_) {
      if (tx_ && e->max_send_wr && cfg_.depth > e->max_send_wr)
        usage_error(e->qp_name, "depth " + std::to_string(cfg_.depth) + " exceeds the QP's max_send_wr " +
                                    std::to_string(e->max_send_wr));
      if (rx_ && !e->srq && e->recv_limited && e->max_recv_wr == 0)
        usage_error(e->qp_name, "its receive queue has no room left: receives the executor keeps posted fill max_recv_wr");
      if (rx_ && !e->srq && (e->recv_limited || e->max_recv_wr) && rx_depth() > e->max_recv_wr)
        usage_error(e->qp_name, "rx_depth " + std::to_string(rx_depth()) + " exceeds the QP's max_recv_wr " +
                                    std::to_string(e->max_recv_wr));
    }
  }

  uint32_t rx_depth() const { return cfg_.rx_depth ? cfg_.rx_depth : cfg_.depth; }

  void setup_tx(std::span<const StreamLane> lanes) {
    uint32_t n = cfg_.post_list;
    for (size_t i = 0; i < eps_.size(); ++i) {
      Endpoint& ep = *eps_[i];
      TxLane lane;
      lane.ep = &ep;
      const std::string& lname = lanes[i].local_mr.empty() ? cfg_.local_mr : lanes[i].local_mr;
      const std::string& rname = lanes[i].remote_mr.empty() ? cfg_.remote_mr : lanes[i].remote_mr;
      lane.lmr = lname.empty() ? &default_local_mr(ep) : &local_mr(ep, lname);
      if (op_info(cfg_.op).remote || hooked())
        lane.rmr = rname.empty() ? (ep.remote_mrs.empty() ? nullptr : &default_remote_mr(ep)) : &remote_mr(ep, rname);
      if (cfg_.keep_latency) {
        size_t samples = static_cast<size_t>(std::min<uint64_t>(cfg_.iterations, kMaxLatencySamples));
        lane.lat_posted.resize(samples);
        lane.lat_done.resize(samples);
      }
      SendRequest r = request(lane, template_edit());
      if (auto p = check_send(ep, r); !p.empty()) usage_error(ep.qp_name, p);
      lane.wrs.resize(n);
      lane.sges.resize(n);
      for (uint32_t k = 0; k < n; ++k) {
        to_verbs(ep, r, lane.wrs[k], &lane.sges[k]);
        lane.wrs[k].next = k + 1 < n ? &lane.wrs[k + 1] : nullptr;
      }
      lane.quota = cfg_.duration > 0 ? kForever : cfg_.iterations;
      lane.until_every = cfg_.signal_every;
      lane.nudge = SendQueueNudge(ep.qpx, ep.qp_type);
      nudging_ |= lane.nudge.active();
      if (hooked()) {
        lane.staged_wr.resize(cfg_.depth);
        lane.staged_sge.resize(cfg_.depth);
      }
      tx_lanes_.push_back(std::move(lane));
    }
    if (hooked()) edits_.resize(cfg_.depth);
    if (cfg_.duration <= 0) {
      uint64_t total = cfg_.iterations * eps_.size();
      if (cfg_.peak && !hooked() && total <= kMaxTimestamps) {
        tposted_.resize(total);
        tcompleted_.resize(total);
      } else if (cfg_.keep_latency) {  // the first kMaxLatencySamples WRs
        tposted_.resize(std::min<uint64_t>(total, kMaxLatencySamples));
        tcompleted_.resize(tposted_.size());
      }
    }
  }

  WrEdit template_edit() const {
    return {cfg_.op, cfg_.size, cfg_.local_offset, cfg_.remote_offset, cfg_.compare_add, cfg_.swap};
  }

  SendRequest request(const TxLane& lane, const WrEdit& e) const {
    Op op = e.op;
    uint32_t size = e.size;
    SendRequest r;
    r.op = op;
    r.num_sge = size > 0 ? 1 : 0;
    r.sge[0] = {lane.lmr, e.local_offset, size};
    r.remote = lane.rmr;
    r.remote_offset = e.remote_offset;
    r.imm = cfg_.imm;
    r.invalidate_rkey = cfg_.invalidate_rkey;
    r.compare_add = e.compare_add;
    r.swap = e.swap;
    r.signaled = false;
    r.inline_data = size > 0 && size <= cfg_.inline_size && (op == Op::Send || op == Op::SendImm ||
                                                               op == Op::Write || op == Op::WriteImm);
    r.fence = cfg_.fence;
    r.solicited = cfg_.solicited;
    return r;
  }

  void setup_rx(std::span<const StreamLane> lanes) {
    for (const auto& l : lanes) {
      if (!l.pool) usage_error(l.ep->qp_name, "receiving needs a receive pool");
      size_t unit = rx_units_.size();
      for (size_t i = 0; i < rx_units_.size(); ++i)
        if (rx_units_[i].pool == l.pool) unit = i;
      rx_of_qp_.push_back({l.ep->qp->qp_num, unit});
      if (unit < rx_units_.size()) continue;  // lanes on one SRQ share its pool
      const Endpoint& ep = *l.ep;
      const std::string& name = !cfg_.recv_mr.empty() ? cfg_.recv_mr : cfg_.local_mr;
      const LocalMr& mr = name.empty() ? default_local_mr(ep) : local_mr(ep, name);
      uint32_t slot = cfg_.recv_slot_size ? cfg_.recv_slot_size : cfg_.size + (is_ud(ep) ? kGrhBytes : 0);
      uint32_t slots = cfg_.recv_slots ? cfg_.recv_slots : rx_depth();
      l.pool->layout(ep, mr, cfg_.recv_offset, slot, slots);
      if ((cfg_.check_seed || cfg_.on_receive) && l.pool->shared_slots())
        usage_error(ep.qp_name, "checking receives needs a slot per posted receive: " + std::to_string(slots) +
                                    " x " + std::to_string(slot) + " bytes do not fit the receive MR");
      rx_units_.push_back({l.ep, l.pool});
    }
    rx_quota_ = (cfg_.rx_iterations ? cfg_.rx_iterations : cfg_.iterations) * eps_.size();
    if (cfg_.until && !cfg_.rx_iterations) rx_quota_ = kForever;
    recv_batch_ = cfg_.recv_batch ? cfg_.recv_batch : std::clamp<uint32_t>(rx_depth() / 4, 1, 32);
    if (cfg_.check_seed) {
      expected_.resize(cfg_.size);
      fill_pattern(expected_.data(), expected_.size(), *cfg_.check_seed);
    }
  }

  void setup_cqs() {
    setup_cq_handles();
    if (cfg_.check_cq_room) check_cq_room();
  }

  void setup_cq_handles() {
    auto add = [&](ibv_cq* cq, ibv_comp_channel* ch, const Endpoint& ep) {
      if (!cq) usage_error(ep.qp_name, "has no CQ");
      for (const auto& c : cqs_)
        if (c.h.cq == cq) return;
      if (cfg_.events && !ch) usage_error(ep.qp_name, "event mode needs a completion channel on its CQ");
      cqs_.push_back({CqHandle(cq, access_), ch});
      events_.push_back({cq, ch});
    };
    for (auto* e : eps_) {
      if (tx_) add(e->send_cq, e->send_channel, *e);
      if (rx_) add(e->recv_cq, e->recv_channel, *e);
    }
  }

  // Each CQ must hold every completion this stream can have outstanding on it.
  void check_cq_room() {
    for (const auto& c : cqs_) {
      uint64_t need = 0;
      std::vector<ibv_srq*> srqs;
      for (auto* e : eps_) {
        if (tx_ && e->send_cq == c.h.cq) need += (cfg_.depth + cfg_.signal_every - 1) / cfg_.signal_every;
        if (!rx_ || e->recv_cq != c.h.cq) continue;
        if (e->srq && std::find(srqs.begin(), srqs.end(), e->srq) != srqs.end()) continue;
        if (e->srq) srqs.push_back(e->srq);
        need += rx_depth();
      }
      if (need > static_cast<uint64_t>(c.h.cq->cqe))
        usage_error(eps_[0]->qp_name, "its CQ holds " + std::to_string(c.h.cq->cqe) + " completions but this stream can have " +
                                          std::to_string(need) + " outstanding (raise the CQ depth or lower depth/rx_depth)");
    }
  }

  void post_initial_receives() {
    if (!cfg_.keep_posted) return;
    for (auto& u : rx_units_) u.pool->fill(*u.ep, rx_depth(), std::max<uint32_t>(recv_batch_, 32));
  }

  // ---- the loop -----------------------------------------------------------------------------
  void loop() {
    ibv_wc wc[kPollBatch];
    uint64_t spins = 0;
    for (;;) {
      if (tx_) post_sends();
      int got = 0;
      for (auto& c : cqs_) {
        int n = c.h.poll(poll_batch(), wc);
        if (n < 0) post_error(eps_[0]->qp_name, "ibv_poll_cq", -n, "");
        if (n == 0) continue;
        got += n;
        uint64_t t = clock::ticks();
        for (int i = 0; i < n; ++i) dispatch(wc[i], t);
      }
      if (rx_) repost_receives();
      now_ = clock::ticks();
      if (got) last_activity_ = now_;
      if (now_ >= deadline_ || stopped()) close_tx();
      if (done()) break;
      if (got == 0) idle();
      if (cfg_.progress && (++spins & 255) == 0) report_progress();
    }
  }

  // A receive-only stream with a count takes no more completions than it still needs: the
  // next ones on its CQ may be the next step's (a smoke receive of a UD QP that several
  // senders have already sent to).
  int poll_batch() const {
    if (tx_ || !rx_ || rx_quota_ == kForever || received_ >= rx_quota_) return kPollBatch;
    return static_cast<int>(std::min<uint64_t>(kPollBatch, rx_quota_ - received_));
  }

  bool stopped() const { return cfg_.stop && cfg_.stop->load(std::memory_order_relaxed); }

  // Unpaced, each lane fills its queue in turn. Paced, the lanes take the tokens round robin,
  // one list each per pass, from the lane the tokens last ran out at: a lane never starves the
  // others, whatever its place.
  void post_sends() {
    size_t lanes = tx_lanes_.size();
    for (size_t k = 0; k < lanes; ++k) {
      size_t li = pacer_.on() ? (next_lane_ + k) % lanes : k;
      TxLane& lane = tx_lanes_[li];
      while (lane.posted < lane.quota) {
        uint64_t left = lane.quota - lane.posted;
        uint32_t n = static_cast<uint32_t>(std::min<uint64_t>(cfg_.post_list, left));
        // Full lists only (like perftest), except the tail of the run.
        if (lane.outstanding + n > cfg_.depth) break;
        if (pacer_.on()) {
          // Waiting for tokens is the stream's own doing, not a silent device: it counts as
          // activity, so a long gap between bursts never reads as a timeout.
          uint64_t t = clock::ticks();
          last_activity_ = t;
          if (!pacer_.take(n, t)) {
            next_lane_ = li;
            return;
          }
        }
        if (!fill_list(li, lane, n)) break;
        ibv_send_wr* bad = nullptr;
        if (!tposted_.empty() || !lane.lat_posted.empty() || lane.posted == 0) {
          uint64_t t = clock::ticks();
          for (uint32_t k = 0; k < n && posted_total_ + k < tposted_.size(); ++k) tposted_[posted_total_ + k] = t;
          for (uint64_t k = lane.posted; k < lane.posted + n && k < lane.lat_posted.size(); ++k) lane.lat_posted[k] = t;
          if (lane.posted == 0) lane.first_post = t;
        }
        if (int e = post_send_chain(*lane.ep, lane.wrs.data(), &bad))
          post_error(lane.ep->qp_name, "ibv_post_send", e,
                     "posting " + std::string(op_name(cfg_.op)) + " #" + std::to_string(lane.posted + 1) + " (" +
                         std::to_string(lane.outstanding) + " outstanding)");
        lane.wrs[n - 1].next = n < cfg_.post_list ? &lane.wrs[n] : nullptr;
        lane.posted += n;
        lane.outstanding += n;
        posted_total_ += n;
        if (pacer_.on()) break;  // one list per lane per pass
      }
    }
  }

  // Prepares lane.wrs[0..n) for posting: ids, signaling, and in hook mode the hook's choices.
  // False when nothing is left to post.
  bool fill_list(size_t li, TxLane& lane, uint32_t& n) {
    for (uint32_t k = 0; k < n; ++k) {
      ibv_send_wr& wr = lane.wrs[k];
      uint64_t index = lane.posted + k;
      if (hooked() && !take_staged(lane, wr)) {
        n = k;
        break;
      }
      ++lane.unsignaled;
      // Every signal_every-th WR of the lane ((index + 1) % signal_every == 0: WRs are taken
      // here once each, in index order) and the last one.
      bool every = --lane.until_every == 0;
      if (every) lane.until_every = cfg_.signal_every;
      bool signaled = every || index + 1 == lane.quota;
      wr.send_flags = signaled ? (wr.send_flags | IBV_SEND_SIGNALED) : (wr.send_flags & ~IBV_SEND_SIGNALED);
      wr.wr_id = kStreamSendTag | static_cast<uint64_t>(li) << 32 | lane.unsignaled;
      if (signaled) lane.unsignaled = 0;
      lane.bytes += wr.num_sge ? wr.sg_list[0].length : 0;
    }
    if (n == 0) return false;
    lane.wrs[n - 1].next = nullptr;
    return true;
  }

  // Hook mode. The hook is asked about WRs in runs (up to `depth` ahead of posting, one
  // hook_run call per run) rather than interleaved with each ibv_post_send: on rxe every post
  // is a syscall that runs the whole transfer in the kernel, and on the lab's emulated CPU an
  // interpreter call right after one costs far more than back-to-back calls, which stay warm.
  // The hook still runs once per WR, in order, before its WR is posted.
  bool take_staged(TxLane& lane, ibv_send_wr& wr) {
    if (lane.staged_count == 0) stage(lane);
    if (lane.staged_count == 0) return false;
    size_t cap = lane.staged_wr.size();
    ibv_sge* sge = wr.sg_list;
    ibv_send_wr* next = wr.next;
    wr = lane.staged_wr[lane.staged_head];
    *sge = lane.staged_sge[lane.staged_head];
    wr.sg_list = sge;
    wr.next = next;
    if (++lane.staged_head == cap) lane.staged_head = 0;
    --lane.staged_count;
    return true;
  }

  void stage(TxLane& lane) {
    size_t cap = lane.staged_wr.size();
    if (lane.hook_ended || lane.staged_count >= cap || lane.hook_next >= lane.quota) return;
    size_t want = static_cast<size_t>(std::min<uint64_t>(cap - lane.staged_count, lane.quota - lane.hook_next));
    std::span<WrEdit> edits(edits_.data(), want);
    for (auto& e : edits) e = template_edit();
    size_t got = ask_hook(lane.hook_next, edits);
    hook_calls_ += got < want ? got + 1 : got;  // the call that ended the stream counts too
    for (size_t k = 0; k < got; ++k) {
      check_edit(lane, edits[k], lane.hook_next);
      const WrEdit& e = edits[k];
      build(lane, request(lane, e), staged_tail(lane));
      ++lane.hook_next;
    }
    if (got == want) return;
    lane.hook_ended = true;
    lane.quota = lane.hook_next;
    // Everything chosen is already posted and the last WR went unsignaled: one more WR, the
    // template, carries the signal so the run drains.
    if (lane.staged_count == 0 && lane.unsignaled > 0) {
      build(lane, request(lane, template_edit()), staged_tail(lane));
      lane.quota = lane.hook_next + 1;
    }
  }

  // The ring slot after the last staged WR: (head + count) % cap without a division, as
  // head < cap and count <= cap.
  static size_t staged_tail(const TxLane& lane) {
    size_t slot = lane.staged_head + lane.staged_count;
    return slot >= lane.staged_wr.size() ? slot - lane.staged_wr.size() : slot;
  }

  bool hooked() const { return cfg_.hook_run || cfg_.hook; }

  // The hook's choices for WRs #first.. (edits start as the template); fewer than asked = the end.
  size_t ask_hook(uint64_t first, std::span<WrEdit> edits) {
    if (cfg_.hook_run) return std::min(cfg_.hook_run(first, edits), edits.size());
    for (size_t k = 0; k < edits.size(); ++k)
      if (!cfg_.hook(first + k, edits[k])) return k;
    return edits.size();
  }

  void build(TxLane& lane, const SendRequest& r, size_t slot) {
    to_verbs(*lane.ep, r, lane.staged_wr[slot], &lane.staged_sge[slot]);
    ++lane.staged_count;
  }

  void check_edit(const TxLane& lane, const WrEdit& e, uint64_t index) const {
    const OpInfo& info = op_info(e.op);
    const std::string& qp = lane.ep->qp_name;
    auto where = [&] { return "hook, WR #" + std::to_string(index + 1) + ": "; };
    if (e.op == Op::Recv) usage_error(qp, where() + "recv is not a send operation");
    if (info.atomic && e.size != 8) usage_error(qp, where() + std::string(info.name) + " moves exactly 8 bytes");
    if (e.local_offset + e.size > lane.lmr->length)
      usage_error(qp, where() + "local range [" + std::to_string(e.local_offset) + ", +" + std::to_string(e.size) +
                          ") is outside the " + std::to_string(lane.lmr->length) + "-byte MR");
    if (info.remote) {
      if (!lane.rmr) usage_error(qp, where() + std::string(info.name) + " needs a remote MR");
      if (e.remote_offset + e.size > lane.rmr->length)
        usage_error(qp, where() + "remote range [" + std::to_string(e.remote_offset) + ", +" +
                            std::to_string(e.size) + ") is outside the " + std::to_string(lane.rmr->length) +
                            "-byte remote MR");
      if (info.atomic && (lane.rmr->addr + e.remote_offset) % 8)
        usage_error(qp, where() + "atomic remote address must be 8-byte aligned");
    }
  }

  // Sorted by wr_id tag: an error completion's opcode is undefined (ibv_poll_cq(3)).
  void dispatch(const ibv_wc& wc, uint64_t t) {
    if (expected_status_) return;  // the stream is over; what follows is the QP's flush
    if ((wc.wr_id & kPoolRecvTag) || (!(wc.wr_id & kStreamSendTag) && wc.status == IBV_WC_SUCCESS &&
                                       (wc.opcode & IBV_WC_RECV))) {
      on_receive(wc, t);
      return;
    }
    if (!(wc.wr_id & kStreamSendTag)) return;  // a script's own WR
    size_t li = (wc.wr_id >> 32) & 0xFFFF;
    if (li >= tx_lanes_.size()) return;
    TxLane& lane = tx_lanes_[li];
    uint32_t covered = static_cast<uint32_t>(wc.wr_id);
    if (wc.status != IBV_WC_SUCCESS && cfg_.expect_status && wc.status == *cfg_.expect_status) {
      // What the scenario expects: the stream ends here; the WRs behind this one are flushed
      // with the QP (it is in ERR now), for the plan's flush step to count.
      uint64_t begin = tposted_.empty() ? start_ : tposted_[0];
      expected_status_ = StreamResult::Expected{wc.status, lane.completed + covered, clock::to_seconds(t - begin)};
      return;
    }
    if (wc.status != IBV_WC_SUCCESS) {
      // The failed WR may be an unsignaled one: errors always complete. Its position is
      // `covered` past what has completed so far.
      completion_error(lane.ep->qp_name, wc.status, wc.vendor_err,
                       std::string(op_name(cfg_.op)) + " #" + std::to_string(lane.completed + covered) +
                           (cfg_.duration > 0 ? "" : " of " + std::to_string(cfg_.iterations)) + ", " +
                           std::to_string(cfg_.size) + " bytes" +
                           (lane.rmr ? ", remote MR of '" + lane.ep->peer_name + "'" : ""));
    }
    for (uint64_t k = lane.completed; k < lane.completed + covered && k < lane.lat_done.size(); ++k) lane.lat_done[k] = t;
    lane.outstanding -= covered;
    lane.completed += covered;
    lane.last_done = t;
    if (!hooked()) count_in_timeline(t, static_cast<uint64_t>(covered) * cfg_.size);
    if (!tcompleted_.empty())
      for (uint32_t k = 0; k < covered && completed_total_ + k < tcompleted_.size(); ++k)
        tcompleted_[completed_total_ + k] = t;
    completed_total_ += covered;
    last_tx_ = t;
  }

  // The bucket of tick t on CLOCK_MONOTONIC: the stream's start there plus the ticks since.
  void count_in_timeline(uint64_t t, uint64_t bytes) {
    double ns = static_cast<double>(mono_start_ns_) + clock::to_seconds(t - start_) * 1e9;
    auto bucket = static_cast<int64_t>(ns / (StreamTimeline::kBucketSeconds * 1e9));
    auto& tl = timeline_.bytes;
    if (tl.empty()) timeline_.first = bucket;
    int64_t at = bucket - timeline_.first;
    if (at < 0 || at >= kMaxTimelineBuckets) return;
    if (static_cast<size_t>(at) >= tl.size()) tl.resize(static_cast<size_t>(at) + 1, 0);
    tl[static_cast<size_t>(at)] += bytes;
  }

  void on_receive(const ibv_wc& wc, uint64_t t) {
    const RxUnit* unit = nullptr;
    for (const auto& [qpn, ui] : rx_of_qp_)
      if (qpn == wc.qp_num) unit = &rx_units_[ui];
    if (!unit) return;  // not a receive this stream drives (a CQ shared within the worker)
    Endpoint* ep = unit->ep;
    RecvPool* pool = unit->pool;
    const uint8_t* data = pool->complete(wc.wr_id);
    const std::string& qp = qp_name(wc.qp_num, ep);
    if (wc.status != IBV_WC_SUCCESS) {
      std::string why = wc.status == IBV_WC_LOC_LEN_ERR
                            ? "a message larger than the " + std::to_string(pool->slot_size()) + "-byte receive slot"
                            : "receive #" + std::to_string(received_ + 1);
      completion_error(qp, wc.status, wc.vendor_err, why);
    }
    // A receive a script posted by hand: the message counts, but its buffer is unknown (no
    // check) and it is not re-posted.
    bool ud = is_ud(*ep);
    uint32_t len = wc.byte_len - (ud && wc.byte_len >= kGrhBytes ? kGrhBytes : 0);
    ++received_;
    rx_bytes_ += len;
    last_rx_ = t;
    if (data && cfg_.check_seed && wc.opcode == IBV_WC_RECV) check_receive(qp, data + (ud ? kGrhBytes : 0), len);
    if (cfg_.on_receive) cfg_.on_receive(wc, data ? data + (ud ? kGrhBytes : 0) : nullptr, len);
  }

  const std::string& qp_name(uint32_t qp_num, Endpoint* fallback) const {
    for (auto* e : eps_)
      if (e->qp->qp_num == qp_num) return e->qp_name;
    return fallback->qp_name;
  }

  void check_receive(const std::string& qp, const uint8_t* data, uint32_t len) {
    if (len != cfg_.size)
      throw DataplaneError(DataplaneError::Kind::Data, qp,
                           "QP '" + qp + "': receive #" + std::to_string(received_) + " has " + std::to_string(len) +
                               " bytes, expected " + std::to_string(cfg_.size));
    if (std::memcmp(data, expected_.data(), len) != 0) {
      int64_t at = check_pattern(data, len, *cfg_.check_seed);
      char buf[96];
      std::snprintf(buf, sizeof buf, "byte %lld: expected 0x%02x, found 0x%02x", static_cast<long long>(at),
                    expected_[at], data[at]);
      throw DataplaneError(DataplaneError::Kind::Data, qp,
                           "QP '" + qp + "': receive #" + std::to_string(received_) + " differs from what was sent, " + buf);
    }
    ++checked_;
  }

  void repost_receives() {
    if (!cfg_.keep_posted) return;
    for (auto& u : rx_units_)
      if (u.pool->outstanding() + recv_batch_ <= rx_depth()) u.pool->fill(*u.ep, rx_depth(), recv_batch_);
  }

  // Past the deadline (or told to stop): post nothing new, except one signaled WR where the
  // last posted one was unsignaled, so the run drains.
  // A stream with an iteration count ends early only when told to stop.
  void close_tx() {
    for (auto& lane : tx_lanes_)
      if (lane.quota == kForever || stopped())
        lane.quota = std::min(lane.quota, lane.posted + (lane.unsignaled > 0 ? 1 : 0));
  }

  bool done() {
    if (expected_status_) return true;
    if (tx_)
      for (const auto& lane : tx_lanes_)
        if (lane.posted < lane.quota || lane.outstanding > 0) return false;
    if (rx_) {
      if (stopped()) return true;
      if (cfg_.enough && received_ != enough_asked_at_) {
        enough_asked_at_ = received_;
        if (cfg_.enough()) return true;
      }
      if (cfg_.until) {
        if (received_ >= rx_quota_) return true;
        if (!until_at_) {
          if ((++until_polls_ & 255) != 0 || !cfg_.until()) return false;
          until_at_ = now_;
        }
        return now_ - std::max(last_rx_, until_at_) >= clock::from_seconds(cfg_.idle_ms / 1000.0);
      }
      if (cfg_.duration > 0) {
        if (now_ < deadline_) return false;
        uint64_t last = std::max(last_rx_, deadline_);
        return now_ - last >= clock::from_seconds(cfg_.idle_ms / 1000.0);
      }
      return received_ >= rx_quota_;
    }
    return true;
  }

  void idle() {
    if (nudging_) nudge();
    if (now_ - last_activity_ > clock::from_seconds(timeout_ms_ / 1000.0)) timeout();
    if (cfg_.yield_when_idle) std::this_thread::yield();
    if (cfg_.events) {
      arm_cqs(events_, eps_[0]->qp_name);
      ibv_wc wc[kPollBatch];
      bool any = false;
      for (auto& c : cqs_) {
        int n = c.h.poll(kPollBatch, wc);
        uint64_t t = clock::ticks();
        for (int i = 0; i < n; ++i) dispatch(wc[i], t);
        any |= n > 0;
      }
      if (!any) block_on_channels(events_, 100);
    }
  }

  // Only on passes that found no completion anywhere: a lane that completes is not looked at.
  void nudge() {
    for (auto& lane : tx_lanes_) {
      lane.nudge.observe(lane.outstanding, lane.completed != lane.nudge_seen, now_);
      lane.nudge_seen = lane.completed;
    }
  }

  // "QP 'ua': the device left a send unprocessed ..." per lane whose nudge rang.
  std::vector<std::string> nudge_notes() const {
    std::vector<std::string> notes;
    for (const auto& lane : tx_lanes_)
      if (auto d = lane.nudge.describe(); !d.empty()) notes.push_back("QP '" + lane.ep->qp_name + "': " + d);
    return notes;
  }

  [[noreturn]] void timeout() {
    const Endpoint& ep = *eps_[0];
    if (cfg_.progress) report_progress(/*force=*/true);  // the caller's last word on the counts
    std::string what;
    if (tx_)
      for (const auto& lane : tx_lanes_)
        if (lane.outstanding)
          what = std::to_string(lane.outstanding) + " " + op_name(cfg_.op) + " WRs outstanding on '" +
                 lane.ep->qp_name + "' (" + std::to_string(lane.completed) + " completed)";
    if (what.empty() && rx_)
      what = "received " + std::to_string(received_) + " of " + std::to_string(rx_quota_) + " messages";
    for (const auto& note : nudge_notes()) what += "; " + note;
    throw DataplaneError(DataplaneError::Kind::Timeout, ep.qp_name,
                         "QP '" + ep.qp_name + "': no completion for " + std::to_string(static_cast<int64_t>(timeout_ms_)) + " ms: " +
                             what + " (is the peer receiving? are QPs in RTS?)");
  }

  void report_progress(bool force = false) {
    if (!force && now_ - last_report_ < clock::from_seconds(cfg_.progress_every)) return;
    last_report_ = now_;
    StreamProgress p;
    p.qp = eps_[0]->qp_name;
    for (const auto& lane : tx_lanes_) {
      p.ops += lane.completed;
      p.posted += lane.posted;
      p.bytes += lane.completed * cfg_.size;
    }
    p.recv_ops = received_;
    p.seconds = clock::to_seconds(now_ - start_);
    if (force) p.notes = nudge_notes();
    cfg_.progress(p);
  }

  StreamResult finish() {
    StreamResult r;
    r.hook_calls = hook_calls_;
    if (nudging_) nudge();  // the completions since its last look (a restart ends in a busy pass)
    r.notes = nudge_notes();
    r.rx_checked = checked_;
    r.expected = expected_status_;
    if (cfg_.keep_latency)  // lane by lane (one lane: completion order)
      for (const auto& lane : tx_lanes_)
        for (uint64_t i = 0; i < lane.completed && i < lane.lat_done.size(); ++i)
          r.latency_us.push_back(clock::to_us(lane.lat_done[i] - lane.lat_posted[i]));
    if (tx_) {
      for (const auto& lane : tx_lanes_) {
        r.tx.ops += lane.completed;
        r.tx.bytes += lane.bytes;
        StreamResult::Lane out;
        out.ops = lane.completed;
        out.bytes = lane.bytes;
        out.seconds = lane.last_done > lane.first_post ? clock::to_seconds(lane.last_done - lane.first_post) : 0;
        for (uint64_t i = 0; i < lane.completed && i < lane.lat_done.size(); ++i)
          out.latency_us.push_back(clock::to_us(lane.lat_done[i] - lane.lat_posted[i]));
        r.lanes.push_back(std::move(out));
      }
      r.timeline = timeline_;
      uint64_t begin = tposted_.empty() ? start_ : tposted_[0];
      r.tx.seconds = clock::to_seconds((last_tx_ > begin ? last_tx_ : now_) - begin);
      set_rates(r.tx);
      if (!tposted_.empty() && cfg_.peak && completed_total_ == tposted_.size()) {
        double per_op = peak_ticks_per_op(tposted_, tcompleted_);
        if (per_op > 0) r.tx.bw_peak = cfg_.size * clock::ticks_per_second() / per_op / kMB;
      }
    }
    if (rx_) {
      // Topped up after the clock stopped: the next stream on this QP starts fully posted.
      if (cfg_.keep_posted)
        for (auto& u : rx_units_) u.pool->fill(*u.ep, rx_depth(), 32);
      r.rx.ops = received_;
      r.rx.bytes = rx_bytes_;
      r.rx.seconds = received_ ? clock::to_seconds(last_rx_ - start_) : 0;
      set_rates(r.rx);
    }
    return r;
  }

  const StreamConfig& cfg_;
  CqAccess access_;
  bool tx_ = false, rx_ = false;
  bool nudging_ = false;  // some lane has a nudge that can ring
  std::vector<Endpoint*> eps_;
  std::vector<TxLane> tx_lanes_;
  std::vector<RxUnit> rx_units_;
  std::vector<std::pair<uint32_t, size_t>> rx_of_qp_;  // qp_num -> rx unit
  std::vector<Cq> cqs_;
  std::vector<EventCq> events_;
  std::vector<uint64_t> tposted_, tcompleted_;
  std::vector<uint8_t> expected_;
  uint64_t posted_total_ = 0, completed_total_ = 0;
  uint64_t received_ = 0, rx_bytes_ = 0, rx_quota_ = 0, checked_ = 0, hook_calls_ = 0;
  std::vector<WrEdit> edits_;  // hook mode: one run of the hook's choices
  uint32_t recv_batch_ = 1;
  uint64_t start_ = 0, now_ = 0, deadline_ = kForever, last_activity_ = 0, last_report_ = 0;
  RatePacer pacer_;
  double timeout_ms_ = 0;  // cfg_.timeout_ms, or longer for a paced sender's receiver
  size_t next_lane_ = 0;  // paced: the lane that takes the next tokens first
  uint64_t last_tx_ = 0, last_rx_ = 0;
  int64_t mono_start_ns_ = 0;
  StreamTimeline timeline_;
  uint64_t until_at_ = 0, until_polls_ = 0, enough_asked_at_ = 0;
  std::optional<StreamResult::Expected> expected_status_;
};

}  // namespace

double timeline_peak(std::span<const StreamTimeline* const> timelines) {
  int64_t first = 0, end = 0;
  bool any = false;
  for (const auto* t : timelines) {
    if (!t || t->bytes.empty()) continue;
    int64_t e = t->first + static_cast<int64_t>(t->bytes.size());
    first = any ? std::min(first, t->first) : t->first;
    end = any ? std::max(end, e) : e;
    any = true;
  }
  if (!any) return 0;
  std::vector<uint64_t> sum(static_cast<size_t>(end - first), 0);
  double bucket = StreamTimeline::kBucketSeconds;
  for (const auto* t : timelines) {
    if (!t || t->bytes.empty()) continue;
    bucket = t->bucket_seconds;
    for (size_t i = 0; i < t->bytes.size(); ++i) sum[static_cast<size_t>(t->first - first) + i] += t->bytes[i];
  }
  uint64_t best = *std::max_element(sum.begin(), sum.end());
  return static_cast<double>(best) / bucket / kMB;
}

StreamResult run_stream(std::span<const StreamLane> lanes, const StreamConfig& cfg, const CqAccess& access) {
  Engine e(lanes, cfg, access);
  return e.run();
}

}  // namespace qpo::dataplane
