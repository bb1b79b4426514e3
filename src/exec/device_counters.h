#pragma once
// What a device and the netdev under it have counted, read from sysfs: fault injection reports
// the change over a fault's window, a stalled workload the change over its quiet spell.
#include <cstdint>
#include <map>
#include <string>

#include "exec/run_state.h"

namespace qpo::exec {

using Counters = std::map<std::string, uint64_t>;

// /sys/class/infiniband/<dev>/ports/<port>/hw_counters, by name.
Counters read_hw_counters(const DeviceState& d);
// The netdev under the device's GID (rxe: the one given to `rdma link add`); "" if none.
std::string netdev_of(const DeviceState& d);
// tx/rx packets, drops and errors of a netdev (/sys/class/net/<netdev>/statistics).
Counters read_netdev_statistics(const std::string& netdev);
// "name +delta, ..." for the counters that grew; "no change" when none did.
std::string describe_growth(const Counters& before, const Counters& after);

}  // namespace qpo::exec
