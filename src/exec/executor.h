#pragma once
// Runs a validated scenario's plan against real devices with libibverbs: creates every
// object, drives each ibv_modify_qp with exactly the planned attr_mask, checks it with
// ibv_query_qp, moves traffic with data checked, runs the extra transitions, and tears down
// in reverse order on every path. run_scenario runs every host here (one thread each); a
// remote host runs the same HostSession in its `qpo agent` (src/cluster).
#include <atomic>

#include "plan/plan.h"
#include "report/live_log.h"
#include "report/run_report.h"

namespace qpo::exec {

struct RunOptions {
  int timeout_ms = 5000;  // per completion / event wait
  bool smoke = true;      // send/recv + RDMA write with data checked after bring-up
  bool all_hosts_local = false;  // run every host of the scenario in this process (--local)
  // --local with several hosts: a host may take this long to reach the next stage (or a
  // round of a script workload's meeting) before the run is torn down, as with agents.
  // It also bounds a wait for an rdma_cm event the scenario gives no `within`.
  int phase_timeout_ms = 120000;
  // How long a meeting round may take: the phase timeout plus the longest stage's declared
  // waits (plan/declared_waits.h); 0: phase_timeout_ms.
  int meeting_timeout_ms = 0;
  // How many hosts this process runs (run_scenario sets it; an agent's session runs one).
  size_t hosts_here = 1;
  // Threads that create and modify a host's QPs in the bring-up (exec/bringup_runner.h):
  // 1 makes the calls one after another, in plan order.
  unsigned bringup_threads = kDefaultBringupThreads;
  static constexpr unsigned kDefaultBringupThreads = 2;
  // Where each host's lines go once final (`qpo run`'s terminal and --events), or nowhere.
  report::LineSink* live = nullptr;
  // Standard output carries the run's text log (`qpo run` in process, not --format json): an
  // external's `own_values: -` line goes there. Else (JSON on stdout, an agent's stdio
  // protocol) it goes to standard error.
  bool stdout_is_log = false;
  // qpo run --capture DIR: where each host's pcap files go (the plan has its Capture steps).
  std::string capture_dir;
};

report::RunReport run_scenario(const plan::Plan& p, const RunOptions& o);

// Asks a running scenario to stop at the next step and tear down (SIGINT handler).
void request_stop();
bool stop_requested();
// The flag itself, for loops that poll it (script workloads' streams, ping-pongs, barriers,
// qpo.sleep): they see a SIGINT as soon as it is raised, whatever they are doing.
const std::atomic<bool>& stop_flag();
struct RunState;
// Whether a wait of this host should end now: SIGINT, or its channel's stop (the controller's
// abort after another host failed, or the phase timeout found it late).
bool stop_now(const RunState& st);

}  // namespace qpo::exec
