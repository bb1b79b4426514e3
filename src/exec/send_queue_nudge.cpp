#include "exec/send_queue_nudge.h"

#include "dataplane/send_path.h"
#include "verbs/verbs_error.h"

namespace qpo::exec {

SendQueueNudge::SendQueueNudge(ibv_qp_ex* qx, const std::string& qp_type) {
  if (qp_type == "UD" || qp_type == "UC") qx_ = qx;
}

void SendQueueNudge::observe(uint64_t outstanding, bool completed, Clock::time_point now) {
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
  if (now - last_completion_ < kQuiet || now - last_ring_ < kQuiet) return;
  last_ring_ = now;
  ++rings_;
  rang_since_completion_ = true;
  if (int e = dataplane::ring_doorbell(qx_)) ring_errno_ = e;
}

std::string SendQueueNudge::describe() const {
  if (rings_ == 0) return "";
  std::string s = "the device left a send unprocessed for " + std::to_string(kQuiet.count()) +
                  " ms; rang the send queue's doorbell again " + std::to_string(rings_) +
                  (rings_ == 1 ? " time" : " times");
  if (ring_errno_) s += " (ibv_wr_complete: " + verbs::errno_name(ring_errno_) + ")";
  s += restarts_ ? ", and it went on (" + std::to_string(restarts_) + (restarts_ == 1 ? " restart)" : " restarts)")
                 : ", without effect";
  return s;
}

}  // namespace qpo::exec
