#pragma once
// A host's packet capture for `qpo run --capture DIR` (plan steps Capture and CaptureEnd): one
// wire::LiveCapture per netdev its devices send through, started before the first QP is made
// and stopped before the first object is destroyed; at the stop the run's QPs (names, numbers,
// GIDs, every host's from the directory) go beside each file for `qpo packets`.
#include <memory>
#include <string>
#include <vector>

#include "exec/run_state.h"
#include "plan/plan.h"
#include "wire/pcap_io.h"

namespace qpo::exec {

class WireCaptures {
 public:
  // Starts the captures of `step` (plan::StepKind::Capture) into `dir`, a line per netdev.
  // A capture that cannot start fails the run (its line says why: no permission, no netdev).
  void start(RunState& st, const plan::Step& step, const std::string& dir);
  // Stops them (plan step `end_step`, CaptureEnd), a line per file with its packet count.
  void stop(RunState& st, int end_step);
  ~WireCaptures();

 private:
  std::vector<std::unique_ptr<wire::LiveCapture>> live_;
};

// DIR/SCENARIO.HOST.NETDEV.pcap
std::string capture_path(const std::string& dir, const std::string& scenario, const std::string& host, const std::string& netdev);

}  // namespace qpo::exec
