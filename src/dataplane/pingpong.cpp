#include "dataplane/pingpong.h"

#include <endian.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <vector>

#include "dataplane/clock.h"
#include "dataplane/device_clock.h"
#include "dataplane/error.h"
#include "dataplane/pattern.h"
#include "dataplane/post.h"
#include "dataplane/send_path.h"

namespace qpo::dataplane {

namespace {

using clock::kForever;
// Empty polls (or flag reads) between two looks at the clock, the stop flag and the timeout.
constexpr uint32_t kCheckEvery = 256;
// Receives are reposted in chains of this many.
constexpr uint32_t kRefillBatch = 4;

// The counter in the last byte of a written message: 1..255, never 0, so a zeroed buffer
// never looks like an arrival; perftest's write_lat counts through 0 ((char)++n).
inline uint8_t stamp(uint64_t i, bool perftest) {
  return perftest ? static_cast<uint8_t>(i + 1) : static_cast<uint8_t>(i % 255 + 1);
}

class PingPong {
 public:
  PingPong(const StreamLane& lane, const PingPongConfig& cfg, const CqAccess& access)
      : cfg_(cfg), ep_(*lane.ep), pool_(lane.pool) {
    if (!ep_.qp) usage_error(ep_.qp_name, "has no verbs QP (not brought up?)");
    info_ = &op_info(cfg.op);
    // Decided once: the loops test a bool and an integer, not a double, per iteration.
    timed_ = cfg.duration > 0;
    answer_limit_ = cfg.duration <= 0 ? cfg.iterations : kForever;
    stop_ = cfg.stop;
    setup();
    send_cq_ = CqHandle(ep_.send_cq, access);
    recv_cq_ = CqHandle(ep_.recv_cq, access);
    direct_write_ = cfg_.op == Op::Write && signal_every_ == 1 && ep_.qpx && !send_cq_.shared;
    if (cfg_.device_clock && cfg_.initiator) use_device_clock();
  }

  PingPongResult run() {
    clock::ticks_per_second();  // calibrated before the barrier: the first call sleeps ~20 ms
    if (cfg_.ready) cfg_.ready();
    uint64_t start = clock::ticks();
    deadline_ = timed_ ? start + clock::from_seconds(cfg_.duration) : kForever;
    timeout_ = clock::from_seconds(cfg_.timeout_ms / 1000.0);
    idle_ = clock::from_seconds(cfg_.idle_ms / 1000.0);
    if (cfg_.burst > 1) {
      stamps_.reserve(cfg_.iterations / cfg_.burst + 2);
      if (cfg_.initiator) initiate_bursts(); else answer_bursts();
    } else if (cfg_.initiator) {
      stamps_.reserve(timed_ ? 1 << 16 : cfg_.iterations + 1);
      if (direct_write_) initiate_write(); else initiate();
    } else if (direct_write_) {
      answer_write();
    } else if (cfg_.op == Op::Send || cfg_.op == Op::Write) {
      answer();
    }
    PingPongResult r;
    r.iterations = count_;
    r.seconds = clock::to_seconds(clock::ticks() - start);
    r.halved = cfg_.op == Op::Send || cfg_.op == Op::Write;
    finish_checks(r);
    double div = r.halved ? 2.0 : 1.0;
    std::vector<double> us;
    if (dev_cq_) {
      r.device_clock = true;
      us = device_intervals_us(dev_stamps_, ep_.send_clock.mask, ep_.send_clock.khz, div);
    } else if (stamps_.size() > 1) {
      us.reserve(stamps_.size() - 1);
      for (size_t i = 1; i < stamps_.size(); ++i) us.push_back(clock::to_us(stamps_[i] - stamps_[i - 1]) / div);
    }
    if (!us.empty()) {
      if (cfg_.keep_times)  // before latency_stats sorts them; the first kMaxLatencySamples
        r.times_us.assign(us.begin(), us.begin() + static_cast<std::ptrdiff_t>(std::min(us.size(), kMaxLatencySamples)));
      r.lat = latency_stats(us);
    }
    return r;
  }

 private:
  void setup() {
    auto bad = [&](const std::string& m) { usage_error(ep_.qp_name, m); };
    if (cfg_.op == Op::Recv || cfg_.op == Op::SendImm || cfg_.op == Op::WriteImm)
      bad(std::string("ping-pong supports send, write, read, cas and faa (not ") + info_->name + ")");
    if (cfg_.duration <= 0 && cfg_.iterations == 0) bad("give iterations > 0 or a duration");
    if (cfg_.size == 0) bad("size must be > 0");
    if (cfg_.burst > 1 && (cfg_.op != Op::Send || timed_))
      bad("bursts of messages are a send ping-pong's, counted by iterations (not a duration)");
    if ((cfg_.imm || cfg_.peer_qpn_from_imm) && cfg_.op != Op::Send) bad("immediate data goes with a send ping-pong only");
    if (cfg_.peer_qpn_from_imm && (cfg_.initiator || !is_ud(ep_)))
      bad("learning the peer's QP number from its first message is a UD target's");
    if (cfg_.burst > 1 && cfg_.rx_depth < std::min<uint64_t>(cfg_.burst, cfg_.iterations))
      bad("a burst of " + std::to_string(cfg_.burst) + " messages needs as many receives posted (rx_depth " +
          std::to_string(cfg_.rx_depth) + ")");
    if (info_->atomic && cfg_.size != 8) bad(std::string(info_->name) + " moves exactly 8 bytes (size = 8)");
    lmr_ = cfg_.local_mr.empty() ? &default_local_mr(ep_) : &local_mr(ep_, cfg_.local_mr);
    if (info_->remote) rmr_ = cfg_.remote_mr.empty() ? &default_remote_mr(ep_) : &remote_mr(ep_, cfg_.remote_mr);
    // Every send signaled by default, as perftest does: on rxe an unsignaled send is not
    // cheaper (the completer still walks it) and reaping in bursts measured ~3% slower.
    signal_every_ = cfg_.signal_every ? cfg_.signal_every : 1;
    if (ep_.max_send_wr && signal_every_ > ep_.max_send_wr / 2 + 1)
      bad("signal_every " + std::to_string(signal_every_) + " is too large for max_send_wr " +
          std::to_string(ep_.max_send_wr));
    // Reads and atomics wait for each completion: always signaled.
    if (cfg_.op != Op::Send && cfg_.op != Op::Write) signal_every_ = 1;
    until_signal_ = signal_every_;
    reap_what_ = cfg_.op == Op::Send || cfg_.op == Op::Write ? "send completion" : std::string(info_->name) + " completion";

    SendRequest r;
    r.op = cfg_.imm && cfg_.op == Op::Send ? Op::SendImm : cfg_.op;
    r.imm = cfg_.imm.value_or(0);
    r.num_sge = 1;
    r.sge[0] = {lmr_, cfg_.local_offset, cfg_.size};
    r.remote = rmr_;
    r.remote_offset = cfg_.remote_offset;
    r.compare_add = cfg_.op == Op::FetchAdd ? 1 : 0;
    r.inline_data = cfg_.size <= cfg_.inline_size && (cfg_.op == Op::Send || cfg_.op == Op::Write);
    if (cfg_.initiator || cfg_.op == Op::Send || cfg_.op == Op::Write)
      if (auto p = check_send(ep_, r); !p.empty()) bad(p);
    to_verbs(ep_, r, wr_, &sge_);
    if (cfg_.op == Op::Write) {
      if (cfg_.recv_offset + cfg_.size > lmr_->length)
        bad("the peer's writes land at [" + std::to_string(cfg_.recv_offset) + ", +" + std::to_string(cfg_.size) +
            ") outside the " + std::to_string(lmr_->length) + "-byte MR");
      inbound_ = lmr_->data + cfg_.recv_offset;
      out_flag_ = lmr_->data + cfg_.local_offset + cfg_.size - 1;
      // Zeroed before the barrier: the peer writes nothing until both sides are ready. Not with
      // perftest's counter: ib_write_lat may have written its first message already (the
      // buffer was zeroed when it was allocated).
      if (!cfg_.perftest_counter) inbound_[cfg_.size - 1] = 0;
      if (inbound_ <= out_flag_ && out_flag_ < inbound_ + cfg_.size)
        bad("the outbound region overlaps the region the peer writes into");
    }
    if (cfg_.op == Op::Send) {
      if (!pool_) bad("send ping-pong needs a receive pool");
      uint32_t slot = cfg_.recv_slot_size ? cfg_.recv_slot_size : cfg_.size + (is_ud(ep_) ? kGrhBytes : 0);
      pool_->layout(ep_, *lmr_, cfg_.recv_offset, slot, cfg_.recv_slots ? cfg_.recv_slots : cfg_.rx_depth);
      if (cfg_.check_seed && pool_->shared_slots()) bad("checking receives needs rx_depth slots in the MR");
      if (lmr_->data + cfg_.recv_offset < lmr_->data + cfg_.local_offset + cfg_.size &&
          lmr_->data + cfg_.local_offset < lmr_->data + cfg_.recv_offset + uint64_t{slot} * cfg_.rx_depth &&
          cfg_.check_seed)
        bad("receive slots overlap the send region (set recv_offset)");
      pool_->fill(ep_, cfg_.rx_depth);
      if (cfg_.check_seed) {
        expected_.resize(cfg_.size);
        fill_pattern(expected_.data(), cfg_.size, *cfg_.check_seed);
      }
    }
  }

  // The initiator reads its send CQ through the extended poll API, for each completion's
  // device timestamp (poll_device_clock). Checked here, before the barrier, so a scenario that
  // cannot be timed this way fails before any traffic.
  void use_device_clock() {
    auto bad = [&](const std::string& m) { usage_error(ep_.qp_name, m); };
    const DeviceClock& dc = ep_.send_clock;
    if (!dc.cq)
      bad("clock = \"device\" needs a send CQ created with `timestamps: true` (ibv_create_cq_ex with "
          "IBV_WC_EX_WITH_COMPLETION_TIMESTAMP)");
    if (!dc.cq->read_completion_ts)
      bad("its send CQ has no completion timestamps to read (created without IBV_WC_EX_WITH_COMPLETION_TIMESTAMP)");
    if (dc.khz == 0 || dc.mask == 0)
      bad("the device reports hca_core_clock " + std::to_string(dc.khz) + " kHz and completion_timestamp_mask " +
          std::to_string(dc.mask) + " (or ibv_query_device_ex failed): its timestamps cannot be turned into time");
    if (send_cq_.shared)
      bad("clock = \"device\" reads each completion of the send CQ itself: give the QP a send CQ no other worker polls");
    if (signal_every_ != 1) bad("clock = \"device\" times each iteration by its completion: signal_every must be 1");
    dev_cq_ = dc.cq;
    dev_plain_ = ibv_cq_ex_to_cq(dc.cq);
    direct_write_ = false;  // its loop polls with ibv_poll_cq
    dev_stamps_.reserve(timed_ ? 1 << 16 : cfg_.iterations + 1);
  }

  bool stopped() const { return stop_ && stop_->load(std::memory_order_relaxed); }

  bool more(uint64_t i) const {
    if (stopped()) return false;
    return timed_ ? clock::ticks() < deadline_ : i < cfg_.iterations;
  }

  // The order within an iteration follows ib_send_lat/ib_write_lat: post, reap this post's
  // own completion (when signaled) while the peer works, then wait for the peer. Between
  // noticing the peer's message and posting ours (the critical path, twice per round trip)
  // there is nothing but the stamp and the post: receives are replenished after posting.
  // One call site of post() (inlined): read, cas and faa post one signaled WR and wait for it
  // inside post().
  void initiate() {
    for (uint64_t i = 0; more(i); ++i) {
      stamps_.push_back(clock::ticks());
      if (cfg_.op == Op::Write) *out_flag_ = stamp(i, cfg_.perftest_counter);
      post(i);
      bool answered = true;
      if (cfg_.op == Op::Send)
        answered = wait_receive(i);
      else if (cfg_.op == Op::Write)
        answered = wait_flag(i);
      // Stopped while the peer, stopped too, never answered: the stamp just taken closes the
      // last whole iteration.
      if (!answered) return;
      ++count_;
    }
    stamps_.push_back(clock::ticks());
  }

  void answer() {
    for (uint64_t i = 0;; ++i) {
      if (i >= answer_limit_) break;
      if (stopped()) break;
      bool got = cfg_.op == Op::Send ? wait_receive(i) : wait_flag(i);
      if (!got) break;  // duration mode: the initiator stopped
      if (cfg_.op == Op::Write) *out_flag_ = stamp(i, cfg_.perftest_counter);
      post(i);
      ++count_;
    }
  }

  // A turn of `burst` messages each way (ucmatose's rhythm): the initiator sends them all, then
  // waits for as many answers; the target waits for all of them, then answers with as many.
  // The last turn may be shorter. Kept apart from the one-message loops, which are timed.
  uint64_t turn_end(uint64_t i) const { return std::min(i + cfg_.burst, cfg_.iterations); }

  void initiate_bursts() {
    for (uint64_t i = 0; i < cfg_.iterations && !stopped();) {
      uint64_t end = turn_end(i);
      stamps_.push_back(clock::ticks());
      for (uint64_t j = i; j < end; ++j) post(j);
      if (!wait_receive(end - 1)) return;
      count_ = end;
      i = end;
    }
    stamps_.push_back(clock::ticks());
  }

  void answer_bursts() {
    for (uint64_t i = 0; i < cfg_.iterations && !stopped();) {
      uint64_t end = turn_end(i);
      if (!wait_receive(end - 1)) return;
      for (uint64_t j = i; j < end; ++j) post(j);
      count_ = end;
      i = end;
    }
  }

  // ib_write_lat's own case - every write signaled, on a CQ this worker alone polls, through the
  // extended post API - has a loop of its own (direct_write_): the WR is fixed, so an iteration
  // is the flag, the builder calls and one ibv_poll_cq per look, as in perftest's loop, without
  // the general loop's per-iteration decisions (signal or not, which CQ, shared or not, receive
  // or send completion). In the lab that measured ~1% of write_lat's median (40 alternating
  // rounds: fast-iteration medians perftest 10.87, general loop 11.10, this loop 10.97 usec).
  void initiate_write() {
    volatile uint8_t* flag = inbound_ + cfg_.size - 1;
    for (uint64_t i = 0; more(i); ++i) {
      stamps_.push_back(clock::ticks());
      uint8_t v = stamp(i, cfg_.perftest_counter);
      *out_flag_ = v;
      post_write(i);
      if (!spin_on(flag, v, i)) return;
      ++count_;
    }
    stamps_.push_back(clock::ticks());
  }

  void answer_write() {
    volatile uint8_t* flag = inbound_ + cfg_.size - 1;
    for (uint64_t i = 0; i < answer_limit_ && !stopped(); ++i) {
      uint8_t v = stamp(i, cfg_.perftest_counter);
      if (!spin_on(flag, v, i)) break;
      *out_flag_ = v;
      post_write(i);
      ++count_;
    }
  }

  // Posts write i and reaps its completion (a script's own WRs on the CQ are passed over).
  [[gnu::always_inline]] void post_write(uint64_t i) {
    ibv_qp_ex* qx = ep_.qpx;
    ibv_wr_start(qx);
    qx->wr_id = kStreamSendTag | i;
    qx->wr_flags = wr_.send_flags | IBV_SEND_SIGNALED;
    ibv_wr_rdma_write(qx, wr_.wr.rdma.rkey, wr_.wr.rdma.remote_addr);
    if (wr_.send_flags & IBV_SEND_INLINE)
      ibv_wr_set_inline_data(qx, reinterpret_cast<void*>(sge_.addr), sge_.length);
    else
      ibv_wr_set_sge(qx, sge_.lkey, sge_.addr, sge_.length);
    if (int e = ibv_wr_complete(qx)) post_failed(e, i);
    ibv_wc wc;
    uint64_t since = 0;
    for (uint32_t spins = 1;; ++spins) {
      int n = ibv_poll_cq(send_cq_.cq, 1, &wc);
      if (n > 0) {
        if (wc.status != IBV_WC_SUCCESS) completion_failed(wc, i);
        if (wc.wr_id & kStreamSendTag) return;
        continue;  // a script's own WR
      }
      if (spins % kCheckEvery) continue;
      if (!since) since = clock::ticks();
      check_timeout(since, i, reap_what_.c_str());
    }
  }

  // Spins until the peer's write sets the flag to `want`; false when a duration-mode target went
  // idle or the run was stopped (see gave_up).
  [[gnu::always_inline]] bool spin_on(volatile uint8_t* flag, uint8_t want, uint64_t i) {
    uint64_t since = 0;
    for (uint32_t spins = 1; *flag != want; ++spins) {
      if (spins % kCheckEvery) continue;
      uint64_t now = clock::ticks();
      if (!since) since = now;
      if (gave_up(since, now)) return false;
      check_timeout(since, i, "write from the peer", now);
    }
    std::atomic_thread_fence(std::memory_order_acquire);
    return true;
  }

  // Posts this iteration's WR, then (off the critical path) reaps its completion when it is
  // signaled and tops the receives up. A receive must be posted before the post whose answer
  // it takes, so an empty RQ is refilled first.
  [[gnu::always_inline]] void post(uint64_t i) {
    bool send = cfg_.op == Op::Send;
    if (send && pool_->outstanding() == 0) pool_->fill(ep_, cfg_.rx_depth, kRefillBatch);
    bool signaled = --until_signal_ == 0;
    if (signaled) until_signal_ = signal_every_;
    wr_.send_flags = signaled ? (wr_.send_flags | IBV_SEND_SIGNALED) : (wr_.send_flags & ~IBV_SEND_SIGNALED);
    wr_.wr_id = kStreamSendTag | i;
    ibv_send_wr* bad = nullptr;
    if (int e = post_send_chain(ep_, &wr_, &bad)) post_failed(e, i);
    if (signaled) {
      pending_signal_ = true;
      reap_signal(i);
    }
    if (send && pool_->outstanding() + kRefillBatch <= cfg_.rx_depth) pool_->fill(ep_, cfg_.rx_depth, kRefillBatch);
  }

  // The wait loops spin on the poll (or the flag) alone, as perftest's do: the clock, the
  // stop flag and the timeout are looked at once every kCheckEvery empty polls, so the loop
  // notices an arrival as soon as it can. On rxe the completion of a signaled WR is usually
  // there when ibv_post_send returns (the kernel ran the whole exchange inside it).
  [[gnu::always_inline]] void reap_signal(uint64_t i) {
    uint64_t since = 0;
    for (uint32_t spins = 1; pending_signal_; ++spins) {
      if (poll_once(send_cq_, i) || spins % kCheckEvery) continue;
      if (!since) since = clock::ticks();
      check_timeout(since, i, reap_what_.c_str());
    }
  }

  // True when receive i arrived; false when a duration-mode target went idle. Receives are
  // counted, not waited for one by one: reaping a send on a CQ shared with the receives may
  // already have consumed this one.
  [[gnu::always_inline]] bool wait_receive(uint64_t i) {
    uint64_t since = 0;
    for (uint32_t spins = 1; received_ <= i; ++spins) {
      if (poll_once(recv_cq_, i) || spins % kCheckEvery) continue;
      uint64_t now = clock::ticks();
      if (!since) since = now;
      if (gave_up(since, now)) return false;
      check_timeout(since, i, "reply", now);
    }
    return true;
  }

  [[gnu::always_inline]] bool wait_flag(uint64_t i) { return spin_on(inbound_ + cfg_.size - 1, stamp(i, cfg_.perftest_counter), i); }

  // Whether a wait for the peer ends without its message. A duration-mode target stops once
  // the peer has been quiet for idle_ms past the deadline. On the stop flag the target stops
  // at once; the initiator's message is out and the answer usually follows, but a peer that saw
  // the flag before answering never sends it, so the initiator gives up after idle_ms rather
  // than timing out.
  bool gave_up(uint64_t since, uint64_t now) const {
    if (!cfg_.initiator && timed_ && now > deadline_ && now - since > idle_) return true;
    if (!stopped()) return false;
    return !cfg_.initiator || now - since > idle_;
  }

  void check_timeout(uint64_t since, uint64_t i, const char* what, uint64_t now = 0) {
    if (!now) now = clock::ticks();
    if (now - since > timeout_) timed_out(i, what);
  }

  // Polls one CQ once; handles send and receive completions whichever CQ they come from.
  // A CQ this worker alone polls gives one completion per poll, as perftest's loops take
  // them (the next poll finds the rest, in order); a shared CQ goes through the router in
  // batches, which queues what belongs to other workers.
  [[gnu::always_inline]] bool poll_once(const CqHandle& cq, uint64_t i) {
    if (dev_cq_ && cq.cq == dev_plain_) return poll_device_clock(i);
    ibv_wc wc[8];
    int n = cq.shared ? cq.poll(8, wc) : ibv_poll_cq(cq.cq, 1, wc);
    for (int k = 0; k < n; ++k) handle(wc[k], i);
    return n > 0;
  }

  // One completion through ibv_start_poll/ibv_end_poll: the fields handle() reads, plus the
  // device's timestamp of this side's own signaled WRs (dev_stamps_).
  bool poll_device_clock(uint64_t i) {
    ibv_poll_cq_attr attr{};
    int e = ibv_start_poll(dev_cq_, &attr);
    if (e == ENOENT) return false;
    if (e) poll_failed(e, i);
    ibv_wc wc{};
    wc.wr_id = dev_cq_->wr_id;
    wc.status = dev_cq_->status;
    bool stamped = false;  // this side's own WR: the iteration's stamp
    uint64_t ts = 0;
    if (wc.status == IBV_WC_SUCCESS) {
      wc.opcode = ibv_wc_read_opcode(dev_cq_);
      if (wc.opcode & IBV_WC_RECV) {
        wc.byte_len = ibv_wc_read_byte_len(dev_cq_);
      } else if (wc.wr_id & kStreamSendTag) {
        ts = ibv_wc_read_completion_ts(dev_cq_);
        stamped = true;
      }
    } else {
      wc.vendor_err = ibv_wc_read_vendor_err(dev_cq_);
    }
    // Nothing that can throw runs between start and end: a provider may hold the CQ's lock.
    ibv_end_poll(dev_cq_);
    if (stamped) dev_stamps_.push_back(ts);
    handle(wc, i);
    return true;
  }

  [[gnu::always_inline]] void handle(const ibv_wc& wc, uint64_t i) {
    if (wc.status != IBV_WC_SUCCESS) completion_failed(wc, i);
    if (wc.opcode & IBV_WC_RECV) {
      const uint8_t* data = pool_ ? pool_->complete(wc.wr_id) : nullptr;
      if (!data) return;
      if (cfg_.peer_qpn_from_imm && received_ == 0) learn_peer_qpn(wc);
      ++received_;
      if (cfg_.check_seed) {
        uint32_t grh = is_ud(ep_) ? kGrhBytes : 0;
        uint32_t len = wc.byte_len - grh;
        if (len != cfg_.size || std::memcmp(data + grh, expected_.data(), len) != 0) receive_differs(i, len);
        ++checked_;
      }
      return;
    }
    if (!(wc.wr_id & kStreamSendTag)) return;  // a script's own WR
    pending_signal_ = false;
  }

  // udaddy's way: the first message's immediate data is the sender's QP number, the one the
  // answers go to (the address handle, made from where its request came from, reaches its port).
  [[gnu::cold, gnu::noinline]] void learn_peer_qpn(const ibv_wc& wc) {
    if (!(wc.wc_flags & IBV_WC_WITH_IMM))
      throw DataplaneError(DataplaneError::Kind::Data, ep_.qp_name,
                           "QP '" + ep_.qp_name + "': the peer's first message carries no immediate data (its QP number)");
    wr_.wr.ud.remote_qpn = be32toh(wc.imm_data);
    ep_.peer_qpn = wr_.wr.ud.remote_qpn;
  }

  // The error paths build strings: kept out of line so the hot functions above stay small
  // enough to inline into the loops.
  [[noreturn, gnu::cold, gnu::noinline]] void post_failed(int e, uint64_t i) const {
    post_error(ep_.qp_name, "ibv_post_send", e, std::string("posting ") + info_->name + " #" + std::to_string(i + 1));
  }

  [[noreturn, gnu::cold, gnu::noinline]] void poll_failed(int e, uint64_t i) const {
    post_error(ep_.qp_name, "ibv_start_poll", e, "reaping at iteration " + std::to_string(i + 1));
  }

  [[noreturn, gnu::cold, gnu::noinline]] void completion_failed(const ibv_wc& wc, uint64_t i) const {
    bool recv = wc.wr_id & kPoolRecvTag;
    completion_error(ep_.qp_name, wc.status, wc.vendor_err,
                     std::string(recv ? "receive" : info_->name) + " at iteration " + std::to_string(i + 1) +
                         (recv && wc.status == IBV_WC_LOC_LEN_ERR ? " (message larger than the receive slot)" : ""));
  }

  [[noreturn, gnu::cold, gnu::noinline]] void receive_differs(uint64_t i, uint32_t len) const {
    throw DataplaneError(DataplaneError::Kind::Data, ep_.qp_name,
                         "QP '" + ep_.qp_name + "': receive at iteration " + std::to_string(i + 1) +
                             " differs from what was sent (" + std::to_string(len) + " bytes)");
  }

  [[noreturn, gnu::cold, gnu::noinline]] void timed_out(uint64_t i, const char* what) const {
    throw DataplaneError(DataplaneError::Kind::Timeout, ep_.qp_name,
                         "QP '" + ep_.qp_name + "': no " + what + " for " + std::to_string(cfg_.timeout_ms) +
                             " ms at iteration " + std::to_string(i + 1) + " (is the peer running?)");
  }

  void finish_checks(PingPongResult& r) {
    r.checked = checked_;
    if (!cfg_.check_seed || count_ == 0) return;
    uint64_t seed = *cfg_.check_seed;
    if (cfg_.op == Op::Write && cfg_.size > 1) {
      // All but the counter byte came from the peer's pattern-filled source.
      int64_t at = check_pattern(inbound_, cfg_.size - 1, seed);
      if (at >= 0)
        throw DataplaneError(DataplaneError::Kind::Data, ep_.qp_name,
                             "QP '" + ep_.qp_name + "': written data differs from the peer's at byte " + std::to_string(at));
      r.checked = 1;
    } else if (cfg_.op == Op::Read && cfg_.initiator) {
      int64_t at = check_pattern(lmr_->data + cfg_.local_offset, cfg_.size, seed);
      if (at >= 0)
        throw DataplaneError(DataplaneError::Kind::Data, ep_.qp_name,
                             "QP '" + ep_.qp_name + "': read data differs from the peer's at byte " + std::to_string(at));
      r.checked = 1;
    }
  }

  const PingPongConfig& cfg_;
  Endpoint& ep_;
  RecvPool* pool_;
  const OpInfo* info_ = nullptr;
  const LocalMr* lmr_ = nullptr;
  const RemoteMr* rmr_ = nullptr;
  ibv_send_wr wr_{};
  ibv_sge sge_{};
  CqHandle send_cq_, recv_cq_;
  uint32_t signal_every_ = 1;
  uint32_t until_signal_ = 1;      // posts until the next signaled one
  bool pending_signal_ = false;
  std::string reap_what_;
  uint8_t* inbound_ = nullptr;
  uint8_t* out_flag_ = nullptr;
  std::vector<uint8_t> expected_;
  std::vector<uint64_t> stamps_;
  ibv_cq_ex* dev_cq_ = nullptr;                // the device clock's CQ (use_device_clock), else null
  ibv_cq* dev_plain_ = nullptr;                // the same CQ as CqHandle sees it
  std::vector<uint64_t> dev_stamps_;           // completion timestamps of this side's signaled WRs
  uint64_t count_ = 0, received_ = 0, checked_ = 0;
  uint64_t deadline_ = kForever, timeout_ = 0, idle_ = 0;
  bool timed_ = false;                         // cfg_.duration > 0
  bool direct_write_ = false;                  // initiate_write/answer_write instead of the general loops
  uint64_t answer_limit_ = kForever;           // target: iterations, or none when timed
  const std::atomic<bool>* stop_ = nullptr;    // cfg_.stop
};

}  // namespace

PingPongResult run_pingpong(const StreamLane& lane, const PingPongConfig& cfg, const CqAccess& access) {
  if (!lane.ep) throw DataplaneError(DataplaneError::Kind::Usage, "", "ping-pong without an endpoint");
  PingPong p(lane, cfg, access);
  return p.run();
}

}  // namespace qpo::dataplane
