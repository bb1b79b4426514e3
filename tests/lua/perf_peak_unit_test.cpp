// perf.report_bw with several workers (issue 20): the aggregate peak is the best moment of the
// workers' timelines added up on each host's clock, not the sum of their peaks; each worker's
// own peak and average are listed.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "lua_fixture.h"

using qpo::test::FakeEndpoints;
using qpo::test::run_inline;

namespace {

// Two workers (qa the initiator, qb the target), each returning one 64 KiB run with the
// given fields (a Lua table body; 100 iterations at 0.1 Mpps unless given) and report_bw over both.
qpo::lua::WorkloadResult two_workers(const std::string& a, const std::string& b) {
  FakeEndpoints f;
  return run_inline(f,
                    "local perf = require 'qpo.perf'\n"
                    "local MiB = 1048576\n"
                    "local function run(t) t.size = 65536; t.iterations = t.iterations or 100; t.msg_rate = t.msg_rate or 0.1; return { runs = { t } } end\n"
                    "function initiator(w) return run{ " + a + " } end\n"
                    "function target(w) return run{ " + b + " } end\n"
                    "function report(res) return perf.report_bw('write_bw', res) end\n",
                    2);
}

bool near(double x, double y) { return std::fabs(x - y) < 1e-6; }

}  // namespace

TEST_CASE("two workers on one clock: the aggregate peak is the best 10 ms bucket of their sum, not the sum of peaks") {
  // qa: 2, 2, 1 MiB in buckets 100..102; qb: 1, 1, 2 MiB in 101..103. Sum: 2, 3, 2, 2 MiB:
  // the best bucket holds 3 MiB in 10 ms = 300 MB/s (the peaks sum to 500).
  auto r = two_workers("bw_peak = 250, bw_avg = 150, timeline = { clock = 'h1', bucket = 0.01, first = 100, bytes = { 2*MiB, 2*MiB, MiB } }",
                       "bw_peak = 250, bw_avg = 150, timeline = { clock = 'h1', bucket = 0.01, first = 101, bytes = { MiB, MiB, 2*MiB } }");
  REQUIRE_MESSAGE(r.ok, r.error);
  CHECK(near(r.summary.number_or("bw_peak", -1), 300));
  CHECK(near(r.summary.number_or("bw_avg", -1), 300));
  std::string text = r.summary.string_or("text", "");
  CHECK(text.find(" worker qa: 65536 bytes, BW peak 250.00 MB/sec, BW average 150.00 MB/sec") != std::string::npos);
  CHECK(text.find(" worker qb: 65536 bytes, BW peak 250.00 MB/sec, BW average 150.00 MB/sec") != std::string::npos);
}

TEST_CASE("the aggregate average is the bytes of all workers over the longest one's time, not the sum of their averages") {
  // qa: 100 MiB in 1 s (100 MB/s); qb: 50 MiB in 0.25 s (200 MB/s), alone on the link for none
  // of qa's last 0.75 s. Together: 150 MiB in 1 s = 150 MB/s and 2400 WRs in 1 s (the sums
  // would say 300 MB/s and 0.0048 Mpps). The best 10 ms: 1 + 2 MiB = 300 MB/s.
  auto r = two_workers("iterations = 1600, bytes = 1600 * 65536, seconds = 1.0, bw_avg = 100, msg_rate = 0.0016, bw_peak = 120, "
                       "timeline = { clock = 'h1', bucket = 0.01, first = 0, bytes = { MiB, MiB } }",
                       "iterations = 800, bytes = 800 * 65536, seconds = 0.25, bw_avg = 200, msg_rate = 0.0032, bw_peak = 250, "
                       "timeline = { clock = 'h1', bucket = 0.01, first = 0, bytes = { 2*MiB } }");
  REQUIRE_MESSAGE(r.ok, r.error);
  CHECK(near(r.summary.number_or("bw_avg", -1), 150));
  CHECK(near(r.summary.number_or("msg_rate", -1), 0.0024));
  CHECK(r.summary.number_or("bytes", -1) == 2400 * 65536);
  CHECK(near(r.summary.number_or("seconds", -1), 1.0));
  CHECK(near(r.summary.number_or("bw_peak", -1), 300));
  CHECK(r.summary.string_or("text", "").find(" 65536      2400             300.00             150.00") != std::string::npos);
}

TEST_CASE("the aggregate peak is never below the aggregate average (a run shorter than a timeline bucket)") {
  // Both workers move 0.5 MiB in the same 5 ms: 1 MiB in 5 ms = 200 MB/s together. Their one
  // 10 ms bucket holds 1 MiB (100 MB/s) and each one's own peak is 110 MB/s: the whole run,
  // one of the windows a peak is the best of, was faster than either.
  auto r = two_workers("iterations = 8, bytes = 8 * 65536, seconds = 0.005, bw_avg = 100, bw_peak = 110, "
                       "timeline = { clock = 'h1', bucket = 0.01, first = 3, bytes = { MiB // 2 } }",
                       "iterations = 8, bytes = 8 * 65536, seconds = 0.005, bw_avg = 100, bw_peak = 110, "
                       "timeline = { clock = 'h1', bucket = 0.01, first = 3, bytes = { MiB // 2 } }");
  REQUIRE_MESSAGE(r.ok, r.error);
  CHECK(near(r.summary.number_or("bw_avg", -1), 200));
  CHECK(near(r.summary.number_or("bw_peak", -1), 200));
}

TEST_CASE("the aggregate peak stays at or below the sum of the workers' peaks") {
  // 4 + 4 MiB in one bucket would be 800 MB/s; the workers' peaks allow at most 300 + 300.
  auto r = two_workers("bw_peak = 300, bw_avg = 100, timeline = { clock = 'h1', bucket = 0.01, first = 7, bytes = { 4*MiB } }",
                       "bw_peak = 300, bw_avg = 100, timeline = { clock = 'h1', bucket = 0.01, first = 7, bytes = { 4*MiB } }");
  REQUIRE_MESSAGE(r.ok, r.error);
  CHECK(near(r.summary.number_or("bw_peak", -1), 600));
}

TEST_CASE("the aggregate peak is at least the largest worker's peak") {
  // Buckets of 1 MiB each (100 MB/s); one worker's own peak was 180 MB/s.
  auto r = two_workers("bw_peak = 180, bw_avg = 90, timeline = { clock = 'h1', bucket = 0.01, first = 1, bytes = { MiB } }",
                       "bw_peak = 90, bw_avg = 90, timeline = { clock = 'h1', bucket = 0.01, first = 5, bytes = { MiB } }");
  REQUIRE_MESSAGE(r.ok, r.error);
  CHECK(near(r.summary.number_or("bw_peak", -1), 180));
}

TEST_CASE("workers on two hosts (two clocks): each host's peak, added") {
  // h1's best bucket: 3 MiB (300 MB/s); h2's: 2 MiB (200 MB/s); the buckets' numbers are not comparable.
  auto r = two_workers("bw_peak = 400, bw_avg = 100, timeline = { clock = 'h1', bucket = 0.01, first = 9, bytes = { 3*MiB } }",
                       "bw_peak = 400, bw_avg = 100, timeline = { clock = 'h2', bucket = 0.01, first = 9, bytes = { 2*MiB } }");
  REQUIRE_MESSAGE(r.ok, r.error);
  CHECK(near(r.summary.number_or("bw_peak", -1), 500));
}

TEST_CASE("a worker's run without a timeline: the aggregate peak is 0 (not measured) and a note says so") {
  auto r = two_workers("bw_peak = 250, bw_avg = 150, timeline = { clock = 'h1', bucket = 0.01, first = 1, bytes = { MiB } }",
                       "bw_peak = 250, bw_avg = 150");
  REQUIRE_MESSAGE(r.ok, r.error);
  CHECK(r.summary.number_or("bw_peak", -1) == 0);
  CHECK(r.summary.string_or("text", "").find("note: 65536-byte aggregate peak not measured (a worker's run has no timeline)") !=
        std::string::npos);
}

TEST_CASE("one worker keeps its own peak and gets no per-worker lines") {
  FakeEndpoints f;
  auto r = run_inline(f,
                      "local perf = require 'qpo.perf'\n"
                      "function initiator(w) return { runs = { { size = 64, iterations = 10, bw_peak = 7, bw_avg = 5, msg_rate = 0.5 } } } end\n"
                      "function report(res) return perf.report_bw('write_bw', res) end\n");
  REQUIRE_MESSAGE(r.ok, r.error);
  CHECK(r.summary.number_or("bw_peak", -1) == 7);
  CHECK(r.summary.string_or("text", "").find(" worker ") == std::string::npos);
}
