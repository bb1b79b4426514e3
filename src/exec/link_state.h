#pragma once
// Timeline `link:` steps: the netdev under a device goes down or up (`ip link set`), and rxe
// turns the device's port DOWN (IBV_EVENT_PORT_ERR) or ACTIVE (IBV_EVENT_PORT_ACTIVE). A
// LinkStates remembers what it took down (a link already down before the run is not its to
// raise) and brings it back up when it goes (RAII): a run that fails or is interrupted
// between `link: down` and `link: up` does not leave the link down (a killed qpo still can).
#include <string>
#include <vector>

#include "exec/run_state.h"
#include "plan/plan.h"

namespace qpo::exec {

class LinkStates {
 public:
  explicit LinkStates(RunState& st, report::RunReport& log) : st_(st), log_(log) {}
  ~LinkStates();  // every netdev still down goes up again, with a report line
  LinkStates(const LinkStates&) = delete;
  LinkStates& operator=(const LinkStates&) = delete;

  // Runs a SetLink step; false when it failed (the run failed too).
  bool set(const plan::Step& step);

 private:
  struct Down {
    std::string device, netdev;
  };
  RunState& st_;
  report::RunReport& log_;
  std::vector<Down> down_;
};

}  // namespace qpo::exec
