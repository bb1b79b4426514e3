#pragma once
// A host's packet events (plan steps PacketEvents and PacketEventsEnd): the events that act
// here, armed as rules of qpo's tc BPF program (wire::PacketEvents): on the netdev's ingress
// of each receiving QP's device, or for a delay on the sending QP's netdev's egress under a
// prio qdisc with a netem band. Removed first in teardown (and by the destructor on any other
// path) with a line per event saying which packets it acted on.
#include <memory>
#include <string>
#include <vector>

#include "exec/run_state.h"
#include "plan/plan.h"
#include "wire/packet_events.h"

namespace qpo::exec {

class HostPacketEvents {
 public:
  // Arms this host's events of `plan` (a line per event); a failure fails the run.
  void arm(RunState& st, report::RunReport& log, const plan::Plan& plan, const plan::Step& step);
  // Reports each event's matches and detaches (plan step `end_step`).
  void disarm(RunState& st, report::RunReport& log, int end_step);
  ~HostPacketEvents();

 private:
  struct Armed {
    const plan::PacketEventPlan* event;
    size_t program, rule;  // programs_[program], its rule index
    uint32_t dest_qpn;
  };
  // A delay's prio qdisc and netem band on a sending netdev: deleted when this goes.
  struct EgressQdisc {
    std::string netdev;
    ~EgressQdisc();
    std::string remove();  // "" or why `tc qdisc del` failed
    bool removed = false;
  };
  std::vector<std::unique_ptr<EgressQdisc>> qdiscs_;                // made before their programs
  std::vector<std::unique_ptr<wire::PacketEvents>> programs_;      // one per netdev and hook
  std::vector<Armed> armed_;
};

}  // namespace qpo::exec
