#pragma once
// A workload whose QP talks to an external peer (plan/external_peer.h): the tool's own
// conversation, run on the QP alone. For ibv_pingpong it is ibv_rc_pingpong's (or
// ibv_ud_pingpong's) ping-pong of SENDs: the client sends, the server answers each message with
// one of the same size, until each side sent and received `iterations`. For rdma_cm's tools the
// same with their first sender, in bursts for ucmatose (all of one side's messages, then all of
// the other's). qpo's receives are the
// slots bring-up posted before the exchange (as the tool posts its rx_depth receives before its
// own). It runs as one side of its stage's workloads (op_workloads.cpp): prepared and reported
// on the session's thread, run on a worker.
#include <atomic>
#include <string>

#include "dataplane/endpoint.h"
#include "dataplane/pingpong.h"
#include "exec/executor.h"
#include "exec/run_state.h"
#include "plan/plan.h"

namespace qpo::exec {

// A tool's ping-pong of SENDs on qpo's own slots (ibv_rc_pingpong's, ib_send_lat's): the last
// slot sends, the others take the receives bring-up posted before the exchange, as the tools
// post theirs. The QP must have at least two slots (the checks make sure).
dataplane::PingPongConfig slot_pingpong(QpState& q, bool initiator, uint32_t size, uint64_t iterations,
                                        int timeout_ms, const std::atomic<bool>* stop);

class ExternalPingpong {
 public:
  // Builds the ping-pong for Workload step `step`; `halt` stops it (another side failed, Ctrl-C).
  ExternalPingpong(RunState& st, const RunOptions& o, const plan::Step& step, const std::atomic<bool>* halt);
  // On a worker thread: may throw (the caller's guard keeps the error for finish()).
  void run();
  // Back on the session's thread: the step's line; false (the run failed) when it broke.
  bool finish(RunState& st, report::RunReport& log);
  const plan::Step& step() const { return step_; }

  std::string error;  // what stopped it (prepare or run)
  bool timed_out = false;

 private:
  const plan::Step& step_;
  const plan::WorkloadRun& run_;
  QpState* q_ = nullptr;
  dataplane::Endpoint ep_;
  dataplane::PingPongConfig cfg_;
  dataplane::CqAccess access_;
  dataplane::PingPongResult result_;
  std::string cm_tool_;  // rdma_cm: the rdmacm-utils tool on the other side ("" otherwise)

  // rping's pings (exec/external_rping.cpp): message-driven, one work request at a time, with
  // cfg_'s roles and limits (its initiator is rping's client) through the workload's local_mr.
  struct RpingResult {
    uint64_t pings = 0;     // done
    double seconds = 0;
    bool halted = false;    // the stop flag ended a wait
  };
  bool rping_ = false;
  RpingResult rping_result_;
  void run_rping();
  bool finish_rping(report::RunReport& log, report::StepResult line);
  // A failed step's line; the run's reason too unless another side or Ctrl-C halted it.
  static bool report_failure(report::RunReport& log, const std::string& workload, report::StepResult line, const std::string& why,
                             bool halted);
};

}  // namespace qpo::exec
