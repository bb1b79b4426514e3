#pragma once
// Fault injection under Soft-RoCE: rxe sends RoCE packets through an ordinary netdev, so
// tc-netem on that netdev drops, delays, corrupts, duplicates or reorders them. A Faults
// object applies a scenario's faults for one window and always removes them (RAII), and
// reports what they did through the device's hw_counters.
#include <map>
#include <string>
#include <vector>

#include "exec/device_counters.h"
#include "exec/run_state.h"

namespace qpo::exec {

class Faults {
 public:
  // Applies every fault of `window` ("traffic" or "all") on this host's devices.
  Faults(RunState& st, const std::string& window, const std::string& phase);
  ~Faults();  // removes the qdiscs and reports the counter deltas
  Faults(const Faults&) = delete;
  Faults& operator=(const Faults&) = delete;
  bool ok() const { return ok_; }

 private:
  struct Applied {
    std::string fault, device, netdev;
    Counters before;
  };
  RunState& st_;
  std::string phase_;
  std::vector<Applied> applied_;
  bool ok_ = true;
};

}  // namespace qpo::exec
