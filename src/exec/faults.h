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
#include "plan/plan.h"

namespace qpo::exec {

// The root qdisc `tc qdisc show dev NETDEV root` printed: its kind ("fq_codel") and handle
// ("0:", the kernel's own); both empty when the output names none.
struct RootQdisc {
  std::string kind, handle;
};
RootQdisc parse_root_qdisc(const std::string& tc_show_output);

// Why a fault must not install its qdiscs on NETDEV whose root qdisc is `q`; empty when it may.
// A fault replaces the root qdisc and its removal (`qdisc del root`) leaves the kernel's
// default, so only a qdisc the kernel attached itself is ours to replace: handle 0:, whatever
// its kind (noqueue, pfifo_fast, fq_codel, mq, net.core.default_qdisc=fq). Anything else (mqprio
// for DCB, a shaper, an mq with tuned children) is the host's configuration.
std::string root_qdisc_refusal(const std::string& netdev, const RootQdisc& q);

class Faults {
 public:
  // Applies every fault of `window` ("traffic" or "all") on this host's devices.
  Faults(RunState& st, report::RunReport& log, const std::vector<plan::NetemFault>& faults, const std::string& window, const std::string& phase);
  ~Faults();  // removes the qdiscs and reports the counter deltas
  Faults(const Faults&) = delete;
  Faults& operator=(const Faults&) = delete;
  bool ok() const { return ok_; }

 private:
  struct Applied {
    std::string fault, device;
    plan::ObjectId device_id;
    std::string netdev;
    Counters before;
  };
  RunState& st_;
  report::RunReport& log_;
  std::string phase_;
  std::vector<Applied> applied_;
  bool ok_ = true;
};

}  // namespace qpo::exec
