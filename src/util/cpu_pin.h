#pragma once
// CPU pinning of worker threads (a workload's `pin:`): sched_setaffinity on the calling thread.
#include <cstdint>
#include <string>
#include <vector>

namespace qpo::util {

// The CPUs this process may run on (its affinity mask), ascending.
std::vector<int> allowed_cpus();
// "0-3,6" for {0, 1, 2, 3, 6}.
std::string cpu_list(const std::vector<int>& cpus);
// Pins the calling thread to `cpu`; "" on success, else why ("CPU 7 is not available here
// (this process may run on CPUs 0-1)", or sched_setaffinity's errno).
std::string pin_this_thread(int64_t cpu);
// The CPU of worker `k` of a workload with `pin:` (round robin); -1 without pin.
inline int64_t pin_of(const std::vector<int64_t>& pin, size_t k) {
  return pin.empty() ? -1 : pin[k % pin.size()];
}

}  // namespace qpo::util
