#pragma once
// Whether a workload's figures can be trusted: the host's CPU contention while it ran and the
// spread of its samples. Under QEMU TCG (the lab) both qpo's and perftest's latency medians
// jump from ~40 us to milliseconds when the host's cores are busy; a threshold missed then is
// not a regression, and the run must say so next to the figures.
#include <optional>
#include <string>
#include <vector>

#include "report/run_report.h"

namespace qpo::report {

// The host's CPU while a stage of workloads ran (exec/host_load.h measures it). Each figure
// is absent when the host does not expose it.
struct HostLoad {
  std::string source;               // "host" (this machine), "lab host" (the machine running the lab guest)
  double seconds = 0;               // how long the sample covers
  std::optional<double> cpu_wait;   // /proc/pressure/cpu "some": share of the time a task waited for a CPU
  std::optional<double> steal;      // /proc/stat steal: share of CPU time a hypervisor took away
  std::optional<double> load1;      // /proc/loadavg, at the end
  int cpus = 0;
};

// Limits past which a figure is flagged (docs: README "Measurement quality").
inline constexpr double kCpuWaitLimit = 0.25;       // a task waited for a CPU a quarter of the time
inline constexpr double kStealLimit = 0.05;
inline constexpr double kFarFromMedianLimit = 0.05; // 5% of iterations took more than twice the median

struct Quality {
  Fields fields;                    // JSON: workloads[].quality
  std::vector<std::string> reasons; // empty: nothing to distrust
  bool trusted() const { return reasons.empty(); }
};

// `summary` is the workload's summary: far_from_median and bimodal_share come from its
// latency samples (dataplane::latency_stats) when it kept any.
Quality judge_quality(const HostLoad& load, const Fields& summary);

// "measurement quality: <reasons>; figures may not reflect the device"
std::string quality_warning(const Quality& q);

}  // namespace qpo::report
