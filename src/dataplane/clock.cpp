#include "dataplane/clock.h"

#include <atomic>
#include <mutex>
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

std::atomic<double> g_rate{0};  // 0 = not calibrated yet
std::mutex g_calibrating;

}  // namespace

double ticks_per_second() {
  double rate = g_rate.load(std::memory_order_acquire);
  if (rate > 0) return rate;
  std::lock_guard lock(g_calibrating);
  rate = g_rate.load(std::memory_order_relaxed);
  if (rate == 0) {
    rate = calibrate();
    g_rate.store(rate, std::memory_order_release);
  }
  return rate;
}

bool calibrated() { return g_rate.load(std::memory_order_acquire) > 0; }

void forget_calibration_for_tests() { g_rate.store(0, std::memory_order_release); }

}  // namespace qpo::dataplane::clock
