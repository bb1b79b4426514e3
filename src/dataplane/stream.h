#pragma once
// The bandwidth engine: keeps the send queue `depth` deep for N ops or a duration, signals
// every k-th WR, posts in lists, and keeps receives posted and re-posted, all in C++. A
// script crosses into it once per stream (wrk/libmoon: batches first); the per-WR hook is the
// one exception, for patterns a fixed template cannot express.
#include <infiniband/verbs.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "dataplane/cq_router.h"
#include "dataplane/endpoint.h"
#include "dataplane/op.h"
#include "dataplane/recv_pool.h"
#include "dataplane/stats.h"

namespace qpo::dataplane {

// What the per-WR hook may change, per work request, before it is posted.
struct WrEdit {
  Op op;
  uint32_t size;
  uint64_t local_offset;
  uint64_t remote_offset;
  uint64_t compare_add = 0, swap = 0;  // atomics: the operands (cas i -> i + 1 needs them per WR)
};
// Called for op #index (0-based, per stream) with the template's values; false ends the
// stream (what was posted completes). Exceptions propagate out of run_stream.
using StreamHook = std::function<bool(uint64_t index, WrEdit& wr)>;
// The same hook asked about a run of WRs at once: fills out[0..k) for ops #first, #first + 1,
// ... (each entry starts as the template) and returns k; k < out.size() ends the stream after
// those k. Same order and semantics as StreamHook, one call per run: cheaper when each call
// crosses into an interpreter (the Lua binding uses it).
using StreamRunHook = std::function<size_t(uint64_t first, std::span<WrEdit> out)>;

struct StreamProgress {
  std::string qp;       // first lane
  uint64_t ops = 0, bytes = 0, recv_ops = 0;
  uint64_t posted = 0;  // sends posted; posted - ops are outstanding
  std::vector<std::string> notes;  // the last report before a timeout: the nudge's notes
  double seconds = 0;
};

struct StreamConfig {
  Op op = Op::Write;              // Recv: only receive
  uint32_t size = 65536;
  uint64_t iterations = 5000;     // per lane, like perftest -n per QP
  double duration = 0;            // seconds; > 0 replaces iterations
  uint32_t depth = 128;           // outstanding send WRs per lane (perftest -t)
  uint32_t signal_every = 1;      // CQ moderation (perftest -Q); the last WR is always signaled
  uint32_t post_list = 1;         // WRs per ibv_post_send (perftest -l)
  // Software rate limit (perftest --rate_limit_type SW): at most this many WRs per second over
  // the whole stream (all its lanes), posted in bursts of up to `burst` WRs (perftest
  // --burst_size; 0 = post_list). 0 = as fast as the queue allows. On a receive-only stream:
  // the rate its sender is paced at, so the no-completion timeout outlasts twice a burst's gap.
  double rate = 0;
  uint32_t burst = 0;
  uint32_t inline_size = 0;       // send inline when size <= this (perftest -I)
  bool fence = false, solicited = false;
  std::string local_mr;           // "" = the endpoint's first MR
  uint64_t local_offset = 0;
  std::string remote_mr;          // "" = the peer's first MR
  uint64_t remote_offset = 0;
  uint32_t imm = 0;
  uint64_t compare_add = 1, swap = 0;
  uint32_t invalidate_rkey = 0;   // send_inv: the responder's rkey each WR invalidates
  StreamHook hook;                // per-WR mode when set (or hook_run)
  StreamRunHook hook_run;         // per-WR mode, asked in runs; takes precedence over hook

  // Receives: op == Recv, or `duplex` (send and receive in one loop, perftest -b for send).
  bool duplex = false;
  uint32_t rx_depth = 0;          // receives kept posted per lane; 0 = depth
  uint64_t rx_iterations = 0;     // receives to wait for; 0 = iterations (ignored with duration)
  std::string recv_mr;            // "" = local_mr
  uint64_t recv_offset = 0;
  uint32_t recv_batch = 0;        // receives re-posted per ibv_post_recv; 0 = min(32, rx_depth / 4)
  bool keep_posted = true;        // false: only take receives already posted (emptying a queue)
  std::optional<uint64_t> check_seed;  // compare every receive with fill_pattern(seed)
  uint32_t recv_slot_size = 0;    // bytes per receive slot; 0 = size (+ the GRH on UD)
  uint32_t recv_slots = 0;        // slots in the receive layout; 0 = rx_depth (a layout equal to the
                                  // pool's current one keeps its receives: see RecvPool::layout)
  // Every receive, after the stream's own accounting: `data` is the payload (past the GRH on UD)
  // or null for a receive the pool did not post. For checks a single seed cannot express (a UD
  // receiver that several senders fan in to, each with its own pattern); throw to stop.
  std::function<void(const ibv_wc& wc, const uint8_t* data, uint32_t len)> on_receive;

  // Expected outcome: the first send completion with this IBV_WC_* status ends the stream and
  // is returned in StreamResult::expected instead of thrown (a scenario's `expect:`).
  std::optional<int> expect_status;
  // Each WR's post-to-completion time in StreamResult::latency_us (and per lane in
  // StreamResult::lanes), for the first 2^20 WRs of each lane (needs signal_every 1 and an
  // iteration count).
  bool keep_latency = false;
  // The executor's streams: receives it posted before the stream exist whatever the stream
  // asks, and its CQ sizes were judged by the validator (Q601), so no CQ-room check; and the
  // thread yields when idle, as the executor's loops always have (many sides, few cores).
  bool check_cq_room = true;
  bool yield_when_idle = false;

  // Control.
  int timeout_ms = 10000;         // no completion for this long (while work is outstanding) = error
  int idle_ms = 500;              // duration receivers: stop once the deadline passed and this long idle
  // Receivers: stop once this returns true and no receive arrived for idle_ms (the senders
  // said they are done); rx_iterations, when set, is then an upper bound. Checked every few
  // hundred idle polls, never per receive.
  std::function<bool()> until;
  // Receivers: stop at once when this returns true (asked after each receive): the caller
  // knows every message it waits for has come (a fan-in of several senders, several lanes).
  std::function<bool()> enough;
  bool events = false;            // sleep on the completion channel when idle instead of spinning
  bool peak = true;               // per-op timestamps for BW peak (perftest -N turns it off)
  const std::atomic<bool>* stop = nullptr;       // set by the executor (SIGINT): stop posting, drain
  std::function<void()> ready;    // after receives are posted, before the clock starts (a barrier)
  std::function<void(const StreamProgress&)> progress;
  double progress_every = 1.0;    // seconds
};

struct StreamLane {
  Endpoint* ep = nullptr;
  RecvPool* pool = nullptr;       // required when receiving
  // This lane's MRs when they differ from the config's (a group's QP I writes MR I); "" = cfg's.
  std::string local_mr, remote_mr;
};

// Bytes that completed per `bucket_seconds` on the host's CLOCK_MONOTONIC, bucket I covering
// [(first + I) x bucket, (first + I + 1) x bucket): the timelines of streams on one host (one
// clock) add up bucket by bucket, which is the aggregate over time (its peak is the
// workers' aggregate peak, which the sum of their peaks is not).
struct StreamTimeline {
  static constexpr double kBucketSeconds = 0.01;
  double bucket_seconds = kBucketSeconds;
  int64_t first = 0;               // absolute index of bytes[0]
  std::vector<uint64_t> bytes;
};

// The best bucket of the timelines added up (streams that ran at the same time on this host,
// one clock), in MB/sec (2^20 bytes): the peak of them together, which the sum of their peaks
// is not. 0 when none has a timeline (a hooked stream keeps none).
double timeline_peak(std::span<const StreamTimeline* const> timelines);

struct StreamResult {
  BandwidthStats tx;              // completed sends/writes/reads/atomics
  BandwidthStats rx;              // receives
  uint64_t rx_checked = 0;        // receives whose data was compared
  uint64_t hook_calls = 0;
  // One line per QP whose send queue the stream had to restart (SendQueueNudge).
  std::vector<std::string> notes;
  struct Expected {
    int status = 0;       // IBV_WC_*
    uint64_t op = 0;      // 1-based position of the WR in its lane
    double seconds = 0;   // from the first post
  };
  std::optional<Expected> expected;  // StreamConfig::expect_status happened
  std::vector<double> latency_us;    // StreamConfig::keep_latency, in completion order
  // Per send lane, in lane order: what it completed, from its first post to its last
  // completion, and (keep_latency) its WRs' latencies.
  struct Lane {
    uint64_t ops = 0, bytes = 0;
    double seconds = 0;
    std::vector<double> latency_us;
  };
  std::vector<Lane> lanes;
  StreamTimeline timeline;           // sends; empty with a hook (sizes vary per WR)
};

// Throws DataplaneError; outstanding WRs are left to the QP's teardown (or its next ERR flush).
StreamResult run_stream(std::span<const StreamLane> lanes, const StreamConfig& cfg, const CqAccess& access = {});

}  // namespace qpo::dataplane
