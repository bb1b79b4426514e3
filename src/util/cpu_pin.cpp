#include "util/cpu_pin.h"

#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace qpo::util {

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> out;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return out;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) out.push_back(c);
  return out;
}

std::string cpu_list(const std::vector<int>& cpus) {
  std::string out;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += std::to_string(cpus[i]);
    if (j > i) out += "-" + std::to_string(cpus[j]);
    i = j + 1;
  }
  return out;
}

std::string pin_this_thread(int64_t cpu) {
  auto allowed = allowed_cpus();
  if (cpu < 0 || cpu >= CPU_SETSIZE || std::find(allowed.begin(), allowed.end(), cpu) == allowed.end())
    return "CPU " + std::to_string(cpu) + " is not available here (this process may run on CPUs " +
           cpu_list(allowed) + ")";
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(static_cast<int>(cpu), &set);
  // sched_setaffinity with pid 0 is the calling thread.
  if (sched_setaffinity(0, sizeof set, &set) != 0)
    return "sched_setaffinity(CPU " + std::to_string(cpu) + "): " + std::strerror(errno);
  return "";
}

}  // namespace qpo::util
