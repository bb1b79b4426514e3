#include "dataplane/stats.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace qpo::dataplane {

namespace {
constexpr double kClusterGap = 4.0;  // neighbours this far apart: no sample in between
constexpr size_t kSpreadSamples = 50;
}  // namespace

LatencyStats latency_stats(std::vector<double>& us) {
  LatencyStats s;
  s.samples = us.size();
  if (us.empty()) return s;
  std::sort(us.begin(), us.end());
  size_t n = us.size();
  s.t_min = us.front();
  s.t_max = us.back();
  s.t_typical = us[n / 2];
  double sum = 0;
  for (double v : us) sum += v;
  s.t_avg = sum / static_cast<double>(n);
  double var = 0;
  for (double v : us) var += (v - s.t_avg) * (v - s.t_avg);
  s.t_stdev = std::sqrt(var / static_cast<double>(n));
  auto at = [&](double q) { return us[std::min(n - 1, static_cast<size_t>(q * static_cast<double>(n)))]; };
  s.p99 = at(0.99);
  s.p999 = at(0.999);
  // Too few samples say nothing about spread: in a run of 10, the first (cold) iteration
  // alone would be 10% "far from the median".
  if (n >= kSpreadSamples) {
    auto above = std::upper_bound(us.begin(), us.end(), 2 * s.t_typical);
    s.far_from_median = static_cast<double>(us.end() - above) / static_cast<double>(n);
    for (size_t i = std::max<size_t>(1, n / 50); i < n - n / 50; ++i)
      if (us[i - 1] > 0 && us[i] >= kClusterGap * us[i - 1]) {
        s.bimodal_share = static_cast<double>(n - i) / static_cast<double>(n);
        break;
      }
  }
  return s;
}

void set_rates(BandwidthStats& s) {
  s.bw_avg = s.seconds > 0 ? static_cast<double>(s.bytes) / s.seconds / kMB : 0;
  s.msg_rate = s.seconds > 0 ? static_cast<double>(s.ops) / s.seconds / 1e6 : 0;
}

BandwidthStats together(const std::vector<BandwidthStats>& runs) {
  BandwidthStats s;
  for (const auto& r : runs) {
    s.ops += r.ops;
    s.bytes += r.bytes;
    s.seconds = std::max(s.seconds, r.seconds);
  }
  set_rates(s);
  return s;
}

double peak_ticks_per_op(const std::vector<uint64_t>& posted, const std::vector<uint64_t>& completed) {
  size_t n = std::min(posted.size(), completed.size());
  if (n == 0) return 0;
  constexpr size_t kExact = 5000;  // perftest's default iterations: 12.5M window checks
  size_t step = n <= kExact ? 1 : (n + kExact - 1) / kExact;
  double best = std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < n; i += step)
    for (size_t j = i; j < n; j += step) {
      if (completed[j] <= posted[i]) continue;  // clock skew between cores: not a window
      double t = static_cast<double>(completed[j] - posted[i]) / static_cast<double>(j - i + 1);
      if (t < best) best = t;
    }
  return std::isinf(best) ? 0 : best;
}

}  // namespace qpo::dataplane
