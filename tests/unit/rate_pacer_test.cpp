// The bandwidth engine's software rate limit (dataplane/rate_pacer.h): a token bucket of WRs
// that starts full, fills at the rate, and never lets more than burst + time x rate through.
#include <doctest/doctest.h>

#include "dataplane/rate_pacer.h"

using qpo::dataplane::RatePacer;

TEST_CASE("rate pacer: a full burst goes at once, the next WR waits for its token") {
  RatePacer p;
  p.start(0.001, 4, 0);  // one WR per 1000 ticks, bursts of 4
  for (int k = 0; k < 4; ++k) CHECK(p.take(1, 0));
  CHECK_FALSE(p.take(1, 999));
  CHECK(p.take(1, 1000));
  CHECK_FALSE(p.take(1, 1000));
}

TEST_CASE("rate pacer: a list of n WRs waits until n tokens are there") {
  RatePacer p;
  p.start(0.001, 8, 0);
  CHECK(p.take(8, 0));
  CHECK_FALSE(p.take(4, 3999));
  CHECK(p.take(4, 4000));
}

TEST_CASE("rate pacer: an idle stream saves up no more than one burst") {
  RatePacer p;
  p.start(0.001, 2, 0);
  CHECK(p.take(2, 0));
  // A million ticks idle would be 1000 tokens; the bucket holds 2.
  CHECK(p.take(2, 1000000));
  CHECK_FALSE(p.take(1, 1000000));
}

TEST_CASE("rate pacer: asked every tick, it lets through burst + elapsed x rate WRs, not one more") {
  RatePacer p;
  p.start(0.01, 5, 0);  // 1 WR per 100 ticks
  uint64_t passed = 0;
  for (uint64_t t = 0; t <= 100000; ++t)
    while (p.take(1, t)) ++passed;
  CHECK(passed == 5 + 1000);
}

TEST_CASE("rate pacer: off until started") {
  RatePacer p;
  CHECK_FALSE(p.on());
  p.start(1.0, 1, 0);
  CHECK(p.on());
}
