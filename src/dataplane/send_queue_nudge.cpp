#include "dataplane/send_queue_nudge.h"

#include "dataplane/clock.h"
#include "dataplane/error.h"
#include "dataplane/send_path.h"

namespace qpo::dataplane {

SendQueueNudge::SendQueueNudge(ibv_qp_ex* qx, ibv_qp_type qp_type) {
  if (qp_type == IBV_QPT_UD || qp_type == IBV_QPT_UC) qx_ = qx;
  quiet_ = clock::from_seconds(kQuietMs / 1000.0);
}

void SendQueueNudge::observe(uint64_t outstanding, bool completed, uint64_t now) {
  if (last_completion_ == 0) last_completion_ = now;
  if (completed) {
    if (rang_since_completion_) ++restarts_;
    rang_since_completion_ = false;
    last_completion_ = now;
    return;
  }
  if (!qx_ || outstanding == 0) {
    last_completion_ = now;  // idle is not quiet: the clock starts with the next post
    return;
  }
  if (now - last_completion_ < quiet_ || (last_ring_ && now - last_ring_ < quiet_)) return;
  last_ring_ = now;
  ++rings_;
  rang_since_completion_ = true;
  if (int e = ring_doorbell(qx_)) ring_errno_ = e;
}

std::string SendQueueNudge::describe() const {
  if (rings_ == 0) return "";
  std::string s = "the device left a send unprocessed for " + std::to_string(kQuietMs) +
                  " ms; rang the send queue's doorbell again " + std::to_string(rings_) +
                  (rings_ == 1 ? " time" : " times");
  if (ring_errno_) s += " (ibv_wr_complete: " + errno_text(ring_errno_) + ")";
  s += restarts_ ? ", and it went on (" + std::to_string(restarts_) + (restarts_ == 1 ? " restart)" : " restarts)")
                 : ", without effect";
  return s;
}

}  // namespace qpo::dataplane
