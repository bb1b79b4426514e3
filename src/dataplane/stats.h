#pragma once
// Results the way perftest reports them, so numbers can be compared side by side:
// bandwidth in MB/sec with MB = 2^20 bytes, message rate in Mpps, latency in microseconds
// with t_typical = the median.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace qpo::dataplane {

struct LatencyStats {
  uint64_t samples = 0;
  double t_min = 0, t_max = 0, t_typical = 0, t_avg = 0, t_stdev = 0, p99 = 0, p999 = 0;  // usec
  // How far to trust them (report/measurement_quality.h): the share of samples above twice
  // the median, and, when the sorted samples jump by 4x or more somewhere between the 2nd and
  // the 98th percentile (two clusters, as on a contended TCG host), the share above the jump.
  // Both stay 0 below 50 samples.
  double far_from_median = 0;
  double bimodal_share = 0;
};

// Sorts `us` in place. perftest's percentile convention: the value at index floor(q * n).
LatencyStats latency_stats(std::vector<double>& us);

struct BandwidthStats {
  uint64_t ops = 0;
  uint64_t bytes = 0;
  double seconds = 0;     // first post to last completion
  double bw_peak = 0;     // MB/sec, 0 when not measured
  double bw_avg = 0;      // MB/sec
  double msg_rate = 0;    // Mpps
};

// bw_avg and msg_rate from bytes, ops and seconds; both 0 when seconds is 0.
void set_rates(BandwidthStats& s);

// Runs that went at the same time (an op workload's group members, a script workload's
// workers), as one: their ops and bytes added, over the longest one's time, and the rates of
// that. Their averages are not summed: a run shorter than the others would add its whole
// rate though it moved its bytes in part of the time (two runs of 100 MiB in 1 s and 50 MiB in
// 0.25 s moved 150 MB/s, not 300). bw_peak stays 0: the peak of runs together is
// not the sum of their peaks (the Lua built-ins measure it from the runs' timelines).
BandwidthStats together(const std::vector<BandwidthStats>& runs);

// perftest's peak: the best per-op time over any window of consecutive ops, i.e. the minimum
// over i <= j of (completed[j] - posted[i]) / (j - i + 1), in ticks. Exact up to 5000 ops
// (perftest's default run); above that, over every k-th op so the O(n^2) scan stays cheap.
double peak_ticks_per_op(const std::vector<uint64_t>& posted, const std::vector<uint64_t>& completed);

inline constexpr double kMB = 1048576.0;

// Per-iteration times a run hands back (stream keep_latency, ping-pong keep_times): those of
// the first 2^20 iterations, so a long duration run's results stay bounded (8 MiB here, and
// the Lua results' value limit). The statistics still cover every iteration.
inline constexpr size_t kMaxLatencySamples = 1u << 20;

}  // namespace qpo::dataplane
