#pragma once
// An external peer's own out-of-band exchange (plan/external_peer.h), spoken for the QP that
// connects to it: ibv_rc_pingpong's TCP messages. What the tool sends becomes its entry in the
// directory (RemoteQp under the external's name), which the QP's RTR reads as `peer` values,
// exactly as a qpo peer's published entry would be.
#include <map>

#include "exec/run_state.h"
#include "interop/tcp_peer.h"
#include "plan/plan.h"

namespace qpo::exec {

class ExternalExchanges {
 public:
  // Before anything else of the host: a listening socket for each external the host serves
  // (qpo listens), so a tool started at once waits in the backlog. A port that cannot be
  // opened fails that external's exchange step, with the reason.
  void listen(const RunState& st, const plan::HostPlan& host);
  // ExternalExchange: qpo dials the tool's server (the whole exchange, "done" included), or
  // accepts the tool as its client and reads its message. Adds the step's line; false (and
  // the run failed) when the tool did not take part. `timeout_ms` bounds the whole step.
  bool exchange(RunState& st, const plan::Step& step, int timeout_ms);
  // ExternalReply (qpo is the server, its QP at RTS now): qpo's message, then the tool's "done".
  bool reply(RunState& st, const plan::Step& step, int timeout_ms);

 private:
  std::map<int, interop::TcpListener> listening_;  // by Plan::externals index, until its exchange
  std::map<int, std::string> not_listening_;         // ... or why its port could not be opened
  std::map<int, interop::TcpPeer> accepted_;          // by Plan::externals index, from exchange to reply
 public:
  // A failed bring-up: the tools waiting on an accepted connection see it close now.
  void close_all() {
    listening_.clear();
    accepted_.clear();
  }
};

}  // namespace qpo::exec
