#pragma once
// The HTML report's plots as inline SVG, drawn here (no script, no external file). Each plot
// carries the values it draws as data-* attributes (numbers as html::num prints them), so a
// test can compare a rendered page with the JSON results of the same run.
#include <string>
#include <utility>
#include <vector>

#include "report/latency_distribution.h"

namespace qpo::report::html {

// A threshold drawn as a line across a plot: vertical on latency plots, horizontal on
// bandwidth plots. A limit outside the plotted range is named in the legend instead.
struct ThresholdLine {
  std::string name;   // max_p99
  std::string field;  // p99
  double limit = 0;   // in the plot's unit (usec, MB/s)
  std::string unit;
  bool passed = true;
};

// Latency histogram (bars over the distribution's bins; log x when the bins are).
std::string svg_histogram(const std::string& workload, const LatencyDistribution& d,
                          const std::vector<ThresholdLine>& lines);
// Latency CDF: the share of samples at or below each latency.
std::string svg_cdf(const std::string& workload, const LatencyDistribution& d, const std::vector<ThresholdLine>& lines);
// Bandwidth (MB/s) against message size (bytes, log x) for a sweep's runs.
std::string svg_bw_sizes(const std::string& workload, const std::vector<std::pair<double, double>>& size_bw,
                         const std::vector<ThresholdLine>& lines);
// One bar per QP of a group: each member workload's bandwidth (MB/s).
std::string svg_qp_bars(const std::string& group, const std::vector<std::pair<std::string, double>>& qp_bw,
                        const std::vector<ThresholdLine>& lines);

}  // namespace qpo::report::html
