#pragma once
// Samples the CPU load of the machine a run's figures depend on, so a report can say when
// they are not to be trusted (report/measurement_quality.h). In the lab guest that machine
// is the lab's host, not the guest: lab.sh shares the host's /proc read-only and names it in
// QPO_HOST_PROC (a guest under TCG sees no steal time and its own load only).
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "report/measurement_quality.h"

namespace qpo::exec {

struct HostLoadSample {
  std::string source;                    // "host" or "lab host"
  std::chrono::steady_clock::time_point at;
  std::optional<uint64_t> cpu_some_us;   // /proc/pressure/cpu: some ... total=
  std::optional<uint64_t> steal, total;  // /proc/stat "cpu" line, in jiffies
  std::optional<double> load1;           // /proc/loadavg
  int cpus = 0;                          // "cpuN" lines of /proc/stat
};

// Reads $QPO_HOST_PROC (the lab host's /proc) or else /proc. Missing files leave figures empty.
HostLoadSample sample_host_load();
HostLoadSample sample_host_load(const std::string& proc_dir, const std::string& source);

// What happened between two samples of the same source.
report::HostLoad host_load_between(const HostLoadSample& before, const HostLoadSample& after);

}  // namespace qpo::exec
