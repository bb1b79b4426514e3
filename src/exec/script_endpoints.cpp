#include "exec/script_endpoints.h"

#include <algorithm>
#include <memory>
#include <set>
#include <span>

#include "dataplane/error.h"
#include "dataplane/recv_pool.h"
#include "dataplane/stream.h"
#include "exec/endpoints.h"

#include "exec/async_events.h"
#include "exec/steps.h"

namespace qpo::exec {

namespace {

dataplane::StreamConfig one_by_one(int timeout_ms) {
  dataplane::StreamConfig c;
  executor_stream(c);
  c.depth = 1;
  c.timeout_ms = timeout_ms;
  c.stop = &stop_flag();
  return c;
}

// The data path's words name the QP already.
std::string failed(const dataplane::DataplaneError& e, const RunState& st) {
  return e.what() + (e.kind() == dataplane::DataplaneError::Kind::Timeout ? describe_async_events(st) : "");
}

// "" when the stream ran to its end; a stream told to stop returns early.
std::string interrupted() { return stop_requested() ? "interrupted (SIGINT)" : ""; }

// `count` empty SENDs from `from` to the QP `to` (here or on another host), each completed
// before the next.
std::string send_empty(RunState& st, QpState& from, plan::QpId to, uint32_t count, int timeout_ms) {
  auto ep = slots_endpoint(st, from, to, false);  // empty SENDs: no MR but its own slots
  auto c = one_by_one(timeout_ms);
  c.op = dataplane::Op::Send;
  c.size = 0;
  c.iterations = count;
  dataplane::StreamLane lane{&ep, nullptr};
  try {
    dataplane::run_stream(std::span(&lane, 1), c, access_for(st, from));
  } catch (const dataplane::DataplaneError& e) {
    return failed(e, st);
  }
  return interrupted();
}

// `count` receives of `to` completing (messages its peer sent to clear them), not re-posted.
std::string await_receives(RunState& st, QpState& to, uint32_t count, int timeout_ms) {
  auto ep = slots_endpoint(st, to, plan::kNoObject, false);
  auto c = one_by_one(timeout_ms);
  c.op = dataplane::Op::Recv;
  c.size = 1;
  c.iterations = count;
  use_executor_receives(to, c);
  c.rx_depth = count;
  c.keep_posted = false;  // take what is posted; post nothing new
  dataplane::StreamLane lane{&ep, ep.recv_pool.get()};
  try {
    dataplane::run_stream(std::span(&lane, 1), c, access_for(st, to, Reader::Receives));
  } catch (const dataplane::DataplaneError& e) {
    return failed(e, st);
  }
  return interrupted();
}

}  // namespace

std::string local_endpoints(RunState& st, const std::vector<const plan::ScriptQp*>& qps,
                            std::map<std::string, dataplane::Endpoint>& out) {
  EndpointMrs mrs = endpoint_mrs(st);  // one table for every QP of the workload
  for (const plan::ScriptQp* sq : qps) {
    QpState* q = st.qps.find(sq->id);
    if (!q) return "QP '" + sq->name + "' is not on host " + st.host;
    out[sq->name] = endpoint_for(st, *q, sq->peer, &mrs);
  }
  return "";
}

std::string drain_bringup_receives(RunState& st, const std::vector<const plan::ScriptQp*>& qps, int timeout_ms,
                                   std::map<plan::QpId, uint32_t>* across_hosts) {
  for (const plan::ScriptQp* sq : qps) {
    QpState* found = st.qps.find(sq->id);
    if (!found) continue;  // local_endpoints says so
    auto& q = *found;
    // Only receive queues the scripts own hold just the smoke's share; others keep theirs.
    // An SRQ keeps its share too: its receives are not counted per QP, and a stream counts
    // a message that lands there (unchecked); a ping-pong does not receive through SRQs.
    if (q.srq || !sq->owns_receives) continue;
    uint32_t leftover = bringup_outstanding(q);
    if (leftover == 0) continue;
    QpState* peer = st.qps.find(sq->peer);
    if (!peer) {
      // Its peer is on another host: cleared after the hosts compared notes.
      (*across_hosts)[sq->id] = leftover;
      continue;
    }
    auto problem = send_empty(st, *peer, sq->id, leftover, timeout_ms);
    if (problem.empty()) problem = await_receives(st, q, leftover, timeout_ms);
    if (!problem.empty()) return "clearing the executor's receives on '" + sq->name + "': " + problem;
  }
  return "";
}

std::string clear_receives_across_hosts(RunState& st, const plan::WorkloadRun& run,
                                        const std::map<plan::QpId, uint32_t>& all, int timeout_ms) {
  // The workload's QPs that are owed receives, with what each is owed.
  std::vector<std::pair<const plan::ScriptQp*, uint32_t>> owed;
  std::set<plan::QpId> listed;
  for (const auto& worker : run.worker_qps)
    for (const auto& sq : worker)
      if (auto it = all.find(sq.id); it != all.end() && listed.insert(sq.id).second) owed.emplace_back(&sq, it->second);
  // Sends first, then receives: every host sends before it waits, so none waits on a host
  // that is itself waiting.
  for (const auto& [sq, count] : owed) {
    if (st.qps.find(sq->id)) continue;
    QpState* peer = st.qps.find(sq->peer);
    if (!peer) continue;  // another host's pair
    if (auto problem = send_empty(st, *peer, sq->id, count, timeout_ms); !problem.empty())
      return "clearing the executor's receives on '" + sq->name + "' (host " + st.dir.qps.at(sq->id).host + "): " + problem;
  }
  for (const auto& [sq, count] : owed) {
    QpState* q = st.qps.find(sq->id);
    if (!q) continue;
    if (auto problem = await_receives(st, *q, count, timeout_ms); !problem.empty())
      return "clearing the executor's receives on '" + sq->name + "' (its peer is on another host): " + problem;
  }
  return "";
}

}  // namespace qpo::exec
