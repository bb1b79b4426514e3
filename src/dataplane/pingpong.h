#pragma once
// The latency engine, perftest's *_lat tests: one message in flight, timestamped per iteration.
//   send   both sides: the initiator sends, the target answers each receive with a send.
//   write  both sides: each writes into the other's buffer; the last byte carries a counter the
//          receiver spins on (no completion needed to notice arrival, as in ib_write_lat).
//   read, cas, faa   initiator only: post, wait for the completion, repeat.
// Latency is RTT/2 for send and write (like ib_send_lat/ib_write_lat) and the full time for
// read and atomics (like ib_read_lat/ib_atomic_lat).
#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "dataplane/cq_router.h"
#include "dataplane/op.h"
#include "dataplane/stats.h"
#include "dataplane/stream.h"

namespace qpo::dataplane {

struct PingPongConfig {
  Op op = Op::Send;
  bool initiator = true;
  uint32_t size = 2;
  uint64_t iterations = 1000;
  double duration = 0;             // seconds; > 0 replaces iterations
  uint32_t inline_size = 0;        // send inline when size <= this
  uint32_t signal_every = 0;       // sends/writes: one signaled WR per this many; 0 = every one
  std::string local_mr;            // source of sends/writes, destination of reads ("" = first MR)
  uint64_t local_offset = 0;
  std::string remote_mr;           // write: where ours land at the peer; read/atomic: the source
  uint64_t remote_offset = 0;
  uint64_t recv_offset = 0;        // write: where the peer's writes land in local_mr; send: receive slots
  uint32_t rx_depth = 16;          // send: receives kept posted
  // send: messages per turn. 1 is the ping-pong; N: the initiator sends N, then waits for N
  // answers, the target waits for N, then answers with N (ucmatose's rhythm; rx_depth >= N).
  // A turn is one iteration of the latency figures; `iterations` still counts messages.
  uint64_t burst = 1;
  // write: the counter in the last byte as perftest's write_lat keeps it, (char)++n: 1..255, 0,
  // 1, ... (qpo's own skips 0, so that a zeroed buffer never looks like an arrival).
  bool perftest_counter = false;
  // send: each message a SEND with immediate data `imm` (host order; udaddy's carry the
  // sender's QP number). With peer_qpn_from_imm the target answers the QP number its first
  // receive carried as immediate data (UD: the endpoint's peer_ah must reach the sender).
  std::optional<uint32_t> imm;
  bool peer_qpn_from_imm = false;
  // send: the receive slots' layout when it is not rx_depth slots of the message size (plus
  // a UD GRH): the executor's own slots, which bring-up posted into (0 = the default).
  uint32_t recv_slot_size = 0, recv_slots = 0;
  std::optional<uint64_t> check_seed;  // data check (see run_pingpong)
  int timeout_ms = 10000;          // waiting this long for one reply = error
  int idle_ms = 500;               // duration-mode target: stop this long after the last message;
                                   // a stopped initiator: give up on the answer after this long
  bool keep_times = false;         // initiator: return each iteration's time (the first 2^20; perftest -U)
  // Initiator: time the iterations by the device's completion timestamps instead of the host's
  // clock (dataplane/device_clock.h). Needs Endpoint::send_clock (a send CQ created with
  // timestamps), a send CQ no other worker polls, and every WR signaled.
  bool device_clock = false;
  const std::atomic<bool>* stop = nullptr;
  std::function<void()> ready;     // after receives are posted, before the first message
};

struct PingPongResult {
  LatencyStats lat;                // initiator only
  uint64_t iterations = 0;         // round trips (initiator) or answers (target)
  double seconds = 0;
  bool halved = false;             // lat is RTT/2
  bool device_clock = false;       // lat (and times_us) came from the device's timestamps
  uint64_t checked = 0;            // messages whose data was compared
  std::vector<double> times_us;    // keep_times: each iteration's latency, in order (halved as lat)
};

// Data check with check_seed: the caller fills its source region with fill_pattern(seed)
// beforehand (both sides, same seed). send: every receive is compared. write: the landed
// payload (all but the counter byte) is compared at the end. read: the local destination is
// compared at the end. Throws DataplaneError.
PingPongResult run_pingpong(const StreamLane& lane, const PingPongConfig& cfg, const CqAccess& access = {});

}  // namespace qpo::dataplane
