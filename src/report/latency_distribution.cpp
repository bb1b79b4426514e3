#include "report/latency_distribution.h"

#include <algorithm>
#include <cmath>

namespace qpo::report {

LatencyDistribution latency_distribution(std::vector<double>& us, int64_t size) {
  LatencyDistribution d;
  d.size = size;
  d.samples = us.size();
  if (us.empty()) return d;
  if (!std::is_sorted(us.begin(), us.end())) std::sort(us.begin(), us.end());
  double lo = us.front(), hi = us.back();
  size_t bins = hi > lo ? kHistogramBins : 1;
  bool log_bins = lo > 0 && hi > lo;
  d.edges.resize(bins + 1);
  for (size_t i = 0; i <= bins; ++i) {
    double f = static_cast<double>(i) / static_cast<double>(bins);
    d.edges[i] = log_bins ? lo * std::pow(hi / lo, f) : lo + (hi - lo) * f;
  }
  d.edges.front() = lo;
  d.edges.back() = hi;
  d.counts.assign(bins, 0);
  size_t bin = 0;
  for (double v : us) {  // sorted: the bin only moves up
    while (bin + 1 < bins && v >= d.edges[bin + 1]) ++bin;
    ++d.counts[bin];
  }
  size_t n = us.size();
  auto point = [&](size_t idx) { d.cdf.emplace_back(us[idx], static_cast<double>(idx + 1) / static_cast<double>(n)); };
  if (n <= kCdfPoints) {
    for (size_t i = 0; i < n; ++i) point(i);
  } else {
    point(0);
    for (size_t j = 1; j <= kCdfPoints; ++j) point((j * n + kCdfPoints - 1) / kCdfPoints - 1);
  }
  return d;
}

}  // namespace qpo::report
