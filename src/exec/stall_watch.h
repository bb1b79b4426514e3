#pragma once
// What the devices did while the traffic loop made no progress. A workload that stops
// completing fails with "no progress for N ms"; that alone does not say whether the device
// kept sending (retries, drops on the wire) or went silent (a stuck send queue). StallWatch
// snapshots the devices' hw_counters and their netdevs' statistics once the loop has been
// quiet for a moment, and describes the change when the loop gives up.
#include <chrono>
#include <map>
#include <optional>
#include <string>

#include "exec/device_counters.h"
#include "exec/run_state.h"

namespace qpo::exec {

class StallWatch {
 public:
  using Clock = std::chrono::steady_clock;
  explicit StallWatch(const RunState& st) : st_(st) {}
  // Call on every pass of the loop; it reads sysfs only once per quiet spell.
  void observe(bool progress, Clock::time_point now);
  // "QP 'ua2' is in RTS; during the last 19.0 s rxe0 port 1 hw_counters: no change; eth0: tx_packets +3"
  std::string describe(const QpState& q) const;

 private:
  struct DeviceCounters {
    Counters hw, net;    // the port's hw_counters; the statistics of the netdev under its GID
    std::string netdev;  // "" when the GID has none
  };
  DeviceCounters read(const DeviceState& d) const;
  const RunState& st_;
  Clock::time_point quiet_since_ = Clock::now();
  std::optional<Clock::time_point> taken_at_;
  std::map<const DeviceState*, DeviceCounters> before_;  // by device
};

}  // namespace qpo::exec
