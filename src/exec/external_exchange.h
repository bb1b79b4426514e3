#pragma once
// An external peer's own out-of-band exchange (plan/external_peer.h), spoken for the QP that
// connects to it: ibv_rc_pingpong's or perftest's TCP messages (perftest's over its own RDMA
// connection when the tool runs with -R: cm/perftest_control.h). What the tool sends becomes its
// entry in the directory (RemoteQp under the external's name, and for perftest its buffer as a
// RemoteMr under the same name), which the QP's RTR reads as `peer` values, exactly as a qpo
// peer's published entry would be.
#include <map>
#include <memory>
#include <optional>

#include "cm/perftest_control.h"
#include "exec/run_state.h"
#include "interop/perftest_talk.h"
#include "interop/tcp_peer.h"
#include "plan/plan.h"

namespace qpo::exec {

class StepTimer;

class ExternalExchanges {
 public:
  // Before anything else of the host: a listening socket for each external the host serves
  // (qpo listens), so a tool started at once waits in the backlog. A port that cannot be
  // opened fails that external's exchange step, with the reason.
  void listen(const RunState& st, const plan::HostPlan& host);
  // ExternalExchange: qpo dials the tool's server (the whole exchange, "done" included), or
  // accepts the tool as its client and reads its message. Adds the step's line; false (and
  // the run failed) when the tool did not take part. `timeout_ms` bounds the whole step.
  bool exchange(RunState& st, report::RunReport& log, const plan::Step& step, int timeout_ms);
  // ExternalReply, its QP at RTS now. ibv_pingpong when qpo is the server: qpo's message, then
  // the tool's "done". perftest (both roles): two more keys hand-shakes.
  bool reply(RunState& st, report::RunReport& log, const plan::Step& step, int timeout_ms);

  // A perftest conversation between its steps: the connection and the keys qpo sends each time.
  struct Perftest {
    interop::PerftestTalk talk;
    interop::PerftestKeys mine;
    bool sync_held = false;  // -R as server: the tool's sync read, qpo's answer not sent yet
  };
  // -R as server: qpo's half of the sync before the test QPs connect, sent once its listener
  // is up (the CM step that waits for the tool's request calls it first). True when there was
  // nothing held.
  bool answer_sync(int index, interop::Deadline deadline, std::string* why);
  // The workload takes the conversation on from the bring-up (exec/external_perftest.h);
  // nullopt when there is none (its exchange failed).
  std::optional<Perftest> take_perftest(int index);

  // Where an `own_values: -` line goes: stdout when it carries the run's text log, else stderr.
  void values_to_stdout(bool yes) { values_to_stdout_ = yes; }

  // A failed bring-up: the tools waiting on an accepted connection see it close now.
  void close_all() {
    listening_.clear();
    cm_listening_.clear();
    accepted_.clear();
    perftest_.clear();
  }

 private:
  // exchange values: writes the QP's own values, takes the peer's (given, or from its file).
  bool given_exchange(RunState& st, report::RunReport& log, const plan::Step& step, const plan::ExternalPeer& e, interop::Deadline deadline,
                      report::StepResult r, const StepTimer& timer);
  // perftest -R: dials the tool's control connection, or accepts it, then perftest_exchange.
  bool perftest_cm_exchange(RunState& st, report::RunReport& log, const plan::Step& step, const plan::ExternalPeer& e, interop::Deadline deadline,
                            report::StepResult r, const StepTimer& timer);
  bool perftest_exchange(RunState& st, report::RunReport& log, const plan::Step& step, const plan::ExternalPeer& e,
                         std::unique_ptr<interop::PerftestPipe> tool,
                         interop::Deadline deadline, report::StepResult r,
                         const StepTimer& timer);
  std::map<int, interop::TcpListener> listening_;  // by Plan::externals index, until its exchange
  std::map<int, std::unique_ptr<cm::PerftestControlListener>> cm_listening_;  // perftest -R: the same, over rdma_cm
  std::map<int, std::string> not_listening_;         // ... or why its port could not be opened
  std::map<int, interop::TcpPeer> accepted_;          // by Plan::externals index, from exchange to reply
  std::map<int, Perftest> perftest_;                  // by Plan::externals index, from exchange to workload
  bool values_to_stdout_ = false;
};

}  // namespace qpo::exec
