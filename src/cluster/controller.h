#pragma once
// The controller side of a multi-host run: one agent per host (local child, ssh or tcp),
// driven through the same stages as in-process sessions. It relays the exchange, answers
// each barrier once every host arrived (ok only if all are ok), answers a script workload's
// "signals" (its w:signal() counters across hosts) at once, without a round, and turns a
// dead, silent or failing agent into a clear failure naming the host and the phase, while
// the others tear down.
#include <ostream>
#include <string>

#include "exec/executor.h"
#include "report/run_report.h"
#include "scenario/model.h"

namespace qpo::cluster {

struct ControllerOptions {
  exec::RunOptions run;
  int phase_timeout_ms = 120000;     // how long any host may take to reach the next stage
  std::string self_path;             // this binary, for local agents
  std::string agent_command = "qpo"; // what ssh runs remotely
  std::string token;                 // for tcp:// agents
  bool all_local = false;            // every host's agent as a local child, whatever its address
  std::vector<std::string> overrides; // --set PATH=VALUE: every agent applies them as the controller did
  int connect_budget_ms = 15000;      // how long each tcp:// agent is tried (all hosts at once)
  // Where the control plane's tally goes (messages and bytes per type, wall time per round), or nowhere.
  std::ostream* log = nullptr;
  // Where each host's lines go as they come (`qpo run`'s terminal and --events), or nowhere.
  report::LineSink* live = nullptr;
};

report::RunReport run_with_agents(const std::string& scenario_text, const scenario::Scenario& s,
                                  const ControllerOptions& o);

// Ctrl-C: answer the next stage with "stop" for every host.
void request_abort();

}  // namespace qpo::cluster
