#pragma once
// A software rate limit for the bandwidth engine (perftest --rate_limit_type SW, --burst_size):
// a token bucket of WRs. It starts full (`burst` WRs go at once), fills at `per_tick` WRs per
// clock tick up to `burst`, and a list of n WRs is posted only when n tokens are there. Over any
// window of T ticks at most burst + T x per_tick WRs leave, whatever the machine's load: a busy
// host only makes the stream slower than its rate, never faster.
#include <algorithm>
#include <cstdint>

namespace qpo::dataplane {

class RatePacer {
 public:
  bool on() const { return on_; }

  void start(double per_tick, uint32_t burst, uint64_t now) {
    on_ = true;
    per_tick_ = per_tick;
    burst_ = burst;
    credit_ = burst;
    last_ = now;
  }

  // Takes n tokens at time `now` (ticks); false when they are not there yet.
  bool take(uint32_t n, uint64_t now) {
    if (credit_ < n) {
      // Time is turned into tokens only here, and last_ moves with it: none is counted twice.
      credit_ = std::min<double>(burst_, credit_ + static_cast<double>(now - last_) * per_tick_);
      last_ = now;
      if (credit_ < n) return false;
    }
    credit_ -= n;
    return true;
  }

 private:
  bool on_ = false;
  double per_tick_ = 0;
  uint32_t burst_ = 1;
  double credit_ = 0;
  uint64_t last_ = 0;
};

}  // namespace qpo::dataplane
