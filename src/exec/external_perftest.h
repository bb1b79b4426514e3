#pragma once
// A workload whose QP talks to a perftest tool (plan/external_peer.h, exchange: perftest): the
// rest of the tool's conversation after bring-up, on the connection the exchange opened. As
// the tool's client, qpo runs the test (RDMA WRITEs or READs at the tool's buffer, or SENDs
// into its receives) and sends the tool its figures, which the tool prints; as its server,
// qpo serves its buffer (or receives and counts the SENDs) and reports the figures the
// tool's client measured. Against ib_send_lat it plays the tool's ping-pong of SENDs (the
// client sends first) and reports the latency. It runs as one side of its stage's workloads (op_workloads.cpp):
// prepared and reported on the session's thread, run on a worker.
#include <atomic>
#include <optional>
#include <string>

#include "dataplane/endpoint.h"
#include "dataplane/pingpong.h"
#include "dataplane/stream.h"
#include "exec/executor.h"
#include "exec/external_exchange.h"
#include "exec/run_state.h"
#include "plan/plan.h"

namespace qpo::exec {

class ExternalPerftest {
 public:
  ExternalPerftest(RunState& st, const RunOptions& o, const plan::Step& step, const std::atomic<bool>* halt);
  // On a worker thread: may throw (the caller's guard keeps the error for finish()).
  void run();
  // Back on the session's thread: the step's line; false (the run failed) when it broke.
  bool finish(RunState& st, report::RunReport& log);
  const plan::Step& step() const { return step_; }

  std::string error;  // what stopped it (prepare or run)
  bool timed_out = false;

 private:
  // The conversation after bring-up, in the tool's order; throws when the tool did not take part.
  void converse();
  // One keys hand-shake; throws with the reason when the tool did not take part.
  void keys();
  // perftest -R: the TCP exchange's hand-shakes after the CM connected the test QPs; the
  // tool's buffer comes in them (into ep_'s remote MRs).
  void keys_after_cm();
  const plan::Step& step_;
  const plan::WorkloadRun& run_;
  const plan::ExternalPeer* peer_ = nullptr;
  QpState* q_ = nullptr;
  std::optional<ExternalExchanges::Perftest> talk_;
  dataplane::Endpoint ep_;
  dataplane::StreamConfig cfg_;
  dataplane::CqAccess access_;
  dataplane::StreamResult result_;
  dataplane::PingPongConfig pp_;   // ib_send_lat: the ping-pong instead of a stream
  dataplane::PingPongResult pp_result_;
  bool halted_ = false;        // the conversation ended because the stop flag was set
  bool streams_ = false;       // qpo moves the bytes (its client) or receives them (ib_send_bw's server)
  int wait_ms_ = 0;            // how long the server waits for the tool's client to finish its run
  std::optional<interop::PerftestReport> tool_report_;  // what the tool's client measured
  std::string tool_keys_;  // -R: what the tool's keys said (its QPN, PSN, GID, buffer), for the line
  std::string stage_;  // where the conversation is, for a line that says how far it got ("": not started)
};

}  // namespace qpo::exec
