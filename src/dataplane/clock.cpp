#include "dataplane/clock.h"

#include <thread>

namespace qpo::dataplane::clock {

namespace {

double calibrate() {
#if defined(__x86_64__) || defined(__i386__)
  using namespace std::chrono;
  // Two windows and keep the later one: the first can include a page-in or a preemption.
  double rate = 0;
  for (int round = 0; round < 2; ++round) {
    auto t0 = steady_clock::now();
    uint64_t c0 = ticks();
    std::this_thread::sleep_for(milliseconds(10));
    auto t1 = steady_clock::now();
    uint64_t c1 = ticks();
    double secs = duration<double>(t1 - t0).count();
    if (secs > 0 && c1 > c0) rate = static_cast<double>(c1 - c0) / secs;
  }
  // A TSC that does not advance cannot be corrected here; 1e9 keeps durations finite (near
  // zero) instead of dividing by zero.
  return rate > 1e6 ? rate : 1e9;
#else
  return 1e9;  // steady_clock nanoseconds
#endif
}

}  // namespace

double ticks_per_second() {
  static const double rate = calibrate();
  return rate;
}

}  // namespace qpo::dataplane::clock
