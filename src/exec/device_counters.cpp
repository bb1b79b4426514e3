#include "exec/device_counters.h"

#include <filesystem>
#include <fstream>

namespace qpo::exec {

namespace {

std::string port_dir(const DeviceState& d) {
  return "/sys/class/infiniband/" + d.ctx().device_name() + "/ports/" + std::to_string(d.ctx().port());
}

}  // namespace

Counters read_hw_counters(const DeviceState& d) {
  Counters out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(port_dir(d) + "/hw_counters", ec)) {
    std::ifstream in(e.path());
    uint64_t v = 0;
    if (in >> v) out[e.path().filename().string()] = v;
  }
  return out;
}

std::string netdev_of(const DeviceState& d) {
  std::ifstream in(port_dir(d) + "/gid_attrs/ndevs/" + std::to_string(d.gid_index));
  std::string name;
  in >> name;
  return name;
}

Counters read_netdev_statistics(const std::string& netdev) {
  Counters out;
  if (netdev.empty()) return out;
  for (const char* name : {"tx_packets", "tx_dropped", "tx_errors", "rx_packets", "rx_dropped"}) {
    std::ifstream in("/sys/class/net/" + netdev + "/statistics/" + name);
    uint64_t v = 0;
    if (in >> v) out[name] = v;
  }
  return out;
}

std::string describe_growth(const Counters& before, const Counters& after) {
  std::string out;
  for (const auto& [name, v] : after) {
    auto it = before.find(name);
    uint64_t b = it == before.end() ? 0 : it->second;
    if (v > b) out += (out.empty() ? "" : ", ") + name + " +" + std::to_string(v - b);
  }
  return out.empty() ? "no change" : out;
}

}  // namespace qpo::exec
