// Latency on the device's clock (dataplane/device_clock.h): completion timestamps in ticks of
// hca_core_clock, wrapping at completion_timestamp_mask, become per-iteration microseconds.
#include <doctest/doctest.h>

#include "dataplane/device_clock.h"

using qpo::dataplane::device_intervals_us;
using qpo::dataplane::ticks_between;

TEST_CASE("device clock: ticks between two stamps wrap at the timestamp mask") {
  uint64_t mask48 = (uint64_t{1} << 48) - 1;
  CHECK(ticks_between(1000, 1500, mask48) == 500);
  // Stamp b was taken after the 48-bit counter wrapped: 100 ticks to the top, then 50.
  CHECK(ticks_between(mask48 - 99, 50, mask48) == 150);
}

TEST_CASE("device clock: a 1 GHz clock (1,000,000 kHz) gives one microsecond per 1,000 ticks") {
  auto us = device_intervals_us({0, 2000, 5000, 5500}, ~uint64_t{0}, 1000000, 1.0);
  REQUIRE(us.size() == 3);
  CHECK(us[0] == doctest::Approx(2.0));
  CHECK(us[1] == doctest::Approx(3.0));
  CHECK(us[2] == doctest::Approx(0.5));
}

TEST_CASE("device clock: half round trips divide each interval by two") {
  // 156,250 kHz (a ConnectX-4 Lx's clock): 3,125 ticks are 20 us, a 10 us half round trip.
  auto us = device_intervals_us({10, 3135}, ~uint64_t{0}, 156250, 2.0);
  REQUIRE(us.size() == 1);
  CHECK(us[0] == doctest::Approx(10.0));
}

TEST_CASE("device clock: an interval across the counter's wrap stays small") {
  uint64_t mask32 = 0xffffffffu;
  auto us = device_intervals_us({0xfffffc18u, 0x3e8u}, mask32, 1000000, 1.0);  // 1000 + 1000 ticks
  REQUIRE(us.size() == 1);
  CHECK(us[0] == doctest::Approx(2.0));
}

TEST_CASE("device clock: fewer than two stamps or an unknown clock give no interval") {
  CHECK(device_intervals_us({}, ~uint64_t{0}, 1000, 1.0).empty());
  CHECK(device_intervals_us({42}, ~uint64_t{0}, 1000, 1.0).empty());
  CHECK(device_intervals_us({1, 2, 3}, ~uint64_t{0}, 0, 1.0).empty());
}
