#pragma once
// Timestamps for the hot loops. Like perftest we read the TSC: on the lab guest the kernel's
// clocksource is HPET, so clock_gettime is a trapping syscall that would cost more than the
// work it measures. The tick rate is calibrated once per process against steady_clock.
#include <chrono>
#include <cstdint>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

namespace qpo::dataplane::clock {

inline uint64_t ticks() {
#if defined(__x86_64__) || defined(__i386__)
  return __rdtsc();
#else
  return static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
#endif
}

// Ticks per second, calibrated on first use: that call sleeps ~20 ms (thread-safe). Code that
// times something calls it before its timed window starts (the engines do, before their
// `ready` callback), so the sleep never lands inside a measurement.
double ticks_per_second();
// Whether the rate is known yet, i.e. the next ticks_per_second() returns at once.
bool calibrated();
// Tests only: forget the rate, so that the next ticks_per_second() calibrates again.
void forget_calibration_for_tests();
// A deadline (in ticks) that never comes: a run bounded by iterations, not by time.
inline constexpr uint64_t kForever = UINT64_MAX;
inline double to_seconds(uint64_t t) { return static_cast<double>(t) / ticks_per_second(); }
inline double to_us(uint64_t t) { return static_cast<double>(t) * 1e6 / ticks_per_second(); }
inline uint64_t from_seconds(double s) { return static_cast<uint64_t>(s * ticks_per_second()); }

}  // namespace qpo::dataplane::clock
