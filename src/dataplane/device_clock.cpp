#include "dataplane/device_clock.h"

namespace qpo::dataplane {

std::vector<double> device_intervals_us(const std::vector<uint64_t>& stamps, uint64_t mask, uint64_t khz, double div) {
  std::vector<double> us;
  if (stamps.size() < 2 || khz == 0) return us;
  us.reserve(stamps.size() - 1);
  // ticks / (khz * 1000 ticks per second) seconds = ticks * 1000 / khz microseconds.
  double us_per_tick = 1000.0 / static_cast<double>(khz);
  for (size_t i = 1; i < stamps.size(); ++i)
    us.push_back(static_cast<double>(ticks_between(stamps[i - 1], stamps[i], mask)) * us_per_tick / div);
  return us;
}

}  // namespace qpo::dataplane
