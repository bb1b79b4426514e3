#pragma once
// Every asynchronous event this host's devices raised during the run, in arrival order, named
// by the scenario object it concerns. Events are read off the devices' async fds whenever
// someone looks (a timeline event step, a wait that gives up and explains itself), so one
// that came during a workload is still there for the `event:` step after it.
#include <chrono>
#include <mutex>
#include <string>
#include <vector>

namespace qpo::exec {

struct SeenEvent {
  int type = -1;                            // enum ibv_event_type
  std::string object;                       // the QP, SRQ or CQ's scenario name; the device's for port events
  std::string about;                        // "SRQ 'srq0'", "port 1 of device 'da'"
  std::chrono::steady_clock::time_point at; // when qpo read it
  bool taken = false;                       // an event or forbid step accounted for it
  bool described = false;                   // a failure message named it
};

struct EventJournal {
  std::mutex m;                             // script workers may explain their timeouts at once
  std::vector<SeenEvent> seen;
};

}  // namespace qpo::exec
