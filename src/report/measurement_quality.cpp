#include "report/measurement_quality.h"

#include <cmath>
#include <cstdio>

namespace qpo::report {

namespace {


std::string percent(double share) {
  char b[32];
  std::snprintf(b, sizeof b, "%.0f%%", share * 100);
  return b;
}

}  // namespace

Quality judge_quality(const HostLoad& load, const Fields& summary) {
  Quality q;
  q.fields.emplace_back("source", load.source);
  q.fields.emplace_back("seconds", load.seconds);
  if (load.cpus > 0) q.fields.emplace_back("cpus", static_cast<int64_t>(load.cpus));
  if (load.load1) q.fields.emplace_back("load1", *load.load1);
  if (load.cpu_wait) {
    q.fields.emplace_back("cpu_wait", *load.cpu_wait);
    if (*load.cpu_wait > kCpuWaitLimit) {
      std::string r = "on the " + load.source + " a task waited for a CPU " + percent(*load.cpu_wait) + " of the time";
      if (load.load1 && load.cpus > 0) r += " (load " + format_number(*load.load1) + " on " + std::to_string(load.cpus) + " CPUs)";
      q.reasons.push_back(r);
    }
  }
  if (load.steal) {
    q.fields.emplace_back("steal", *load.steal);
    if (*load.steal > kStealLimit)
      q.reasons.push_back("the hypervisor stole " + percent(*load.steal) + " of the " + load.source + "'s CPU time");
  }
  if (auto far = field_number(summary, "far_from_median")) {
    q.fields.emplace_back("far_from_median", *far);
    if (*far > kFarFromMedianLimit)
      q.reasons.push_back(percent(*far) + " of the iterations took more than twice the median");
  }
  if (auto bimodal = field_number(summary, "bimodal_share")) {
    q.fields.emplace_back("bimodal_share", *bimodal);
    if (*bimodal > 0)
      q.reasons.push_back("the latencies form two clusters (" + percent(*bimodal) + " of them at 4x or more the rest)");
  }
  q.fields.emplace_back("trusted", q.trusted());
  return q;
}

std::string quality_warning(const Quality& q) {
  std::string out = "measurement quality: ";
  for (size_t i = 0; i < q.reasons.size(); ++i) out += (i ? "; " : "") + q.reasons[i];
  return out + ": the figures may not reflect the device";
}

}  // namespace qpo::report
