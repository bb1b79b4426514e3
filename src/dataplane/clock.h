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

// Ticks per second (calibrated on first use, ~20 ms; thread-safe).
double ticks_per_second();
inline double to_seconds(uint64_t t) { return static_cast<double>(t) / ticks_per_second(); }
inline double to_us(uint64_t t) { return static_cast<double>(t) * 1e6 / ticks_per_second(); }
inline uint64_t from_seconds(double s) { return static_cast<uint64_t>(s * ticks_per_second()); }

}  // namespace qpo::dataplane::clock
