#pragma once
// A workload's latency samples, kept for plots: a histogram and the empirical CDF, both from
// every sample the run kept (the data path keeps the first 2^20 WRs' times). The JSON results
// carry them (workloads[].latency) and the HTML report draws them (report/html_page.h).
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace qpo::report {

struct LatencyDistribution {
  int64_t size = 0;                 // the run's message size in bytes (0: not known)
  uint64_t samples = 0;
  // Histogram: counts[i] samples in [edges[i], edges[i+1]) (the last bin holds its upper edge).
  // Log-spaced from the smallest to the largest sample when both are > 0 (a TCG host's
  // milliseconds beside tens of microseconds stay visible), else linear; usec.
  std::vector<double> edges;
  std::vector<uint64_t> counts;
  // Empirical CDF at up to kCdfPoints points: (usec, share of samples <= usec); every sample
  // when there are fewer, else the sample at each 1/kCdfPoints step and the largest.
  std::vector<std::pair<double, double>> cdf;
};

inline constexpr size_t kHistogramBins = 40;
inline constexpr size_t kCdfPoints = 200;

// `us` is sorted in place. An empty vector gives samples = 0 and no bins.
LatencyDistribution latency_distribution(std::vector<double>& us, int64_t size);

}  // namespace qpo::report
