#pragma once
// The device capabilities a scenario needs: its `requires:` list, plus what its objects imply
// (an XRC QP needs xrc, an MR with on_demand needs odp, a CQ with timestamps cq_timestamps,
// ...). One list for both readers: `qpo run` checks it against the opened devices
// (exec/capabilities.cpp), `qpo validate --provider` against the provider's known gaps.
#include <string>
#include <vector>

#include "scenario/model.h"

namespace qpo::scenario {

struct CapabilityNeed {
  std::string cap;   // a name of keys::capability_names(): "xrc", "odp", ...
  std::string path;  // what needs it first: "qps.qx.type", "requires"
  SourceLoc loc;     // its place in the file
};

// One entry per capability, sorted by name, each with the first thing in file order that
// needs it (`requires:` first).
std::vector<CapabilityNeed> needed_capabilities(const Scenario& s);

}  // namespace qpo::scenario
