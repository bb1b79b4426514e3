#include "exec/host_load.h"

#include <cstdlib>
#include <algorithm>
#include <fstream>
#include <sstream>

namespace qpo::exec {

namespace {

// procfs files report size 0: read them as a stream, never by size.
std::string read_small(const std::string& path) {
  std::ifstream in(path);
  if (!in) return {};
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

HostLoadSample sample_host_load(const std::string& proc_dir, const std::string& source) {
  HostLoadSample s;
  s.source = source;
  s.at = std::chrono::steady_clock::now();
  // "some avg10=1.23 avg60=... avg300=... total=123456" (microseconds)
  std::istringstream psi(read_small(proc_dir + "/pressure/cpu"));
  for (std::string line; std::getline(psi, line);) {
    auto at = line.find("total=");
    if (line.rfind("some ", 0) == 0 && at != std::string::npos)
      s.cpu_some_us = std::strtoull(line.c_str() + at + 6, nullptr, 10);
  }
  // "cpu  user nice system idle iowait irq softirq steal guest guest_nice", then cpuN lines.
  std::istringstream stat(read_small(proc_dir + "/stat"));
  for (std::string line; std::getline(stat, line);) {
    if (line.rfind("cpu ", 0) == 0) {
      std::istringstream f(line.substr(4));
      uint64_t v[8] = {};
      int got = 0;
      while (got < 8 && f >> v[got]) ++got;
      if (got == 8) {
        s.steal = v[7];
        uint64_t total = 0;
        for (uint64_t x : v) total += x;  // guest time is already inside user/nice
        s.total = total;
      }
    } else if (line.rfind("cpu", 0) == 0) {
      ++s.cpus;
    }
  }
  std::istringstream load(read_small(proc_dir + "/loadavg"));
  double l = 0;
  if (load >> l) s.load1 = l;
  return s;
}

HostLoadSample sample_host_load() {
  const char* lab = std::getenv("QPO_HOST_PROC");
  if (lab && *lab) return sample_host_load(lab, "lab host");
  return sample_host_load("/proc", "host");
}

report::HostLoad host_load_between(const HostLoadSample& before, const HostLoadSample& after) {
  report::HostLoad h;
  h.source = after.source;
  h.seconds = std::chrono::duration<double>(after.at - before.at).count();
  h.cpus = after.cpus;
  h.load1 = after.load1;
  if (before.cpu_some_us && after.cpu_some_us && h.seconds > 0 && *after.cpu_some_us >= *before.cpu_some_us)
    h.cpu_wait = std::min(1.0, static_cast<double>(*after.cpu_some_us - *before.cpu_some_us) / 1e6 / h.seconds);
  if (before.steal && after.steal && before.total && after.total && *after.total > *before.total &&
      *after.steal >= *before.steal)
    h.steal = static_cast<double>(*after.steal - *before.steal) / static_cast<double>(*after.total - *before.total);
  return h;
}

}  // namespace qpo::exec
