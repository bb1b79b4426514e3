#pragma once
// One host's part of a run: its own objects, its own plan steps, and the stages where it
// meets the other hosts through a Channel (see executor.cpp for the stage list).
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <vector>
#include <string>

#include "exec/bringup_runner.h"
#include "exec/exchange.h"
#include "exec/external_exchange.h"
#include "exec/faults.h"
#include "exec/link_state.h"
#include "exec/executor.h"
#include "exec/run_state.h"
#include "exec/packet_events.h"
#include "exec/wire_capture.h"

namespace qpo::exec {

class HostSession {
 public:
  HostSession(const plan::Plan& p, std::string host, const RunOptions& o);
  // Runs every stage, tears down, returns this host's report. Never throws.
  report::RunReport run(Channel& channel);

 private:
  bool ok() const;
  bool told_to_stop() const { return stop_request_ && stop_request_->requested.load(std::memory_order_acquire); }
  void fail_after(Channel& ch, const std::string& what);  // another host failed (or ch timed out)
  void check_stop();
  void tell_failure(Channel& ch);  // this host's failure note, before it arrives with ok=false
  template <typename Fn>
  void for_setup_steps(Fn fn);  // this host's setup steps while the run is ok
  void setup();            // every setup step; a QP's create is prepared here, made in the window
  bool check_capabilities();  // false when the device cannot run this scenario (verdict Unsupported)
  void open_window();      // QP creates and the bring-up steps before the exchange
  void close_window();     // the bring-up steps after it
  // This host's steps of `kind` (ExternalExchange, ExternalReply); false once one failed.
  bool run_external_steps(plan::StepKind kind);
  void log_published();
  void report_device_query(const plan::Step& step);  // ibv_query_port / ibv_query_gid lines
  int setup_step(plan::StepKind kind) const;  // this host's entries of the directory, as report lines at index `at`
  void run_stage(const std::vector<const plan::Step*>& steps);  // this host's steps of one timeline stage
  void run_measured_workloads(const std::vector<const plan::Step*>& workloads);
  bool run_timeline_step(const plan::Step& step);
  void teardown();
  // Hands the lines made since the last call to o_.live: call only where no later step can
  // insert a line before them (after the bring-up is settled, after a stage, at the end).
  void publish_lines();
  void record_counter_deltas();
  void release(verbs::Resource& res);  // one destroy, with its line
  void report_barrier(int plan_step);
  // "host a, plan step 12 (ibv_modify_qp qa)": where the session is, for an unexpected error.
  std::string current_step_text() const;
  // Local work (skipped once failed), then the barrier; false once any host failed.
  bool stage(Channel& ch, const std::string& name, const std::function<void()>& work);

  const plan::Plan& p_;
  const plan::HostPlan* plan_ = nullptr;
  RunOptions o_;
  RunState st_;
  report::RunReport log_;  // the step log: a line per plan step, handed to o_.live as they settle
  BringUpRunner bringup_;
  const StopRequest* stop_request_ = nullptr;  // from the channel: this host was found late
  bool alive_ = true;
  // How long this host waited in its last exchange and its last stage's meeting: the time of
  // the exchange's resolve line and of the barrier line (how the meetings scale with hosts).
  double exchange_us_ = 0, meeting_us_ = 0;
  bool abort_reported_ = false;  // the line saying another host's failure aborted this one
  size_t published_ = 0;         // report lines already handed to o_.live
  bool capability_checked_ = false;
  bool create_started_ = false;
  std::chrono::steady_clock::time_point first_create_;
  std::unique_ptr<Faults> traffic_faults_;  // on from the first workload stage to the last
  std::unique_ptr<LinkStates> links_;       // the timeline's link steps; up again before teardown
  HostPacketEvents events_;                 // wire: events: armed with the first workload stage, off first in teardown
  WireCaptures captures_;                   // qpo run --capture: on from its setup step to its teardown step
  ExternalExchanges externals_;             // stock tools' exchanges: listeners, then between their two steps
  std::map<plan::ObjectId, Counters> counters_at_open_;  // per device id: its hw_counters when opened
};

// One report from the hosts' reports (`hosts[i]` made `parts[i]`) of scenario `name` in
// `file`: steps of every host, the worst verdict with its root cause.
report::RunReport merge_reports(const std::string& name, const std::string& file, std::vector<report::RunReport>& parts,
                                const std::vector<std::string>& hosts);

// The last stage with a workload step on any host (SIZE_MAX when none).
size_t last_workload_stage(const plan::Plan& p);

}  // namespace qpo::exec
