#pragma once
// Restarts an unreliable QP's send queue that the device stopped working on.
//
// Twice in the lab's two-guest CI runs a UD sender's posted send never completed (Linux 6.1
// rxe, host under load). The likely cause, from reading rxe's requester (not reproduced on
// demand): it stops when the QP has more than 64 transmitted packets the netdev has not freed
// yet and counts on the packets' destructor to run it again; if that wake-up is lost, nothing
// else does, and a sender that waits for its completion waits forever. On UD and UC a send completes as soon as its packet leaves,
// so one still outstanding after a second is one the device has not picked up. Ringing the
// doorbell again (dataplane::ring_doorbell, the extended post API) makes rxe run the
// requester over what is queued; on hardware it is a no-op. The run reports every restart:
// the traffic passed, but the lab engineer learns that the device needed a nudge.
// Used by the executor's traffic loop and by the data path's stream.
#include <infiniband/verbs.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace qpo::dataplane {

class SendQueueNudge {
 public:
  static constexpr int kQuietMs = 1000;

  // Inactive (never rings) for reliable QPs - their retransmit timer runs the requester - and
  // without the extended API.
  SendQueueNudge(ibv_qp_ex* qx, ibv_qp_type qp_type);
  // Once per pass of the loop (or per pass without a completion anywhere): how many sends are
  // outstanding, whether one of them completed since the last call, and clock::ticks().
  void observe(uint64_t outstanding, bool completed, uint64_t now);
  bool active() const { return qx_ != nullptr; }
  int rings() const { return rings_; }
  int restarts() const { return restarts_; }
  // "" when it never rang; else what happened, for the workload's result line.
  std::string describe() const;

 private:
  ibv_qp_ex* qx_ = nullptr;
  uint64_t quiet_ = 0;             // kQuietMs in ticks
  uint64_t last_completion_ = 0;   // 0 until the first observe(): the clock starts there
  uint64_t last_ring_ = 0;
  bool rang_since_completion_ = false;
  int rings_ = 0, restarts_ = 0, ring_errno_ = 0;
};

}  // namespace qpo::dataplane
