#pragma once
// A host's packet events (plan steps PacketEvents and PacketEventsEnd): the events whose
// packets arrive here, armed as rules of qpo's tc BPF program (wire::PacketEvents) on the
// netdev of each receiving QP's device, removed first in teardown (and by the destructor on
// any other path) with a line per event saying which packets it acted on.
#include <memory>
#include <vector>

#include "exec/run_state.h"
#include "plan/plan.h"
#include "wire/packet_events.h"

namespace qpo::exec {

class HostPacketEvents {
 public:
  // Arms this host's events of `plan` (a line per event); a failure fails the run.
  void arm(RunState& st, const plan::Plan& plan, const plan::Step& step);
  // Reports each event's matches and detaches (plan step `end_step`).
  void disarm(RunState& st, int end_step);

 private:
  struct Armed {
    const plan::PacketEventPlan* event;
    size_t program, rule;  // programs_[program], its rule index
    uint32_t dest_qpn;
  };
  std::vector<std::unique_ptr<wire::PacketEvents>> programs_;  // one per netdev
  std::vector<Armed> armed_;
};

}  // namespace qpo::exec
