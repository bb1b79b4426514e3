#pragma once
// Running a Lua workload: the executor's entry point into src/lua.
//
// The executor brings the QPs up, fills one dataplane::Endpoint per local QP, and calls
// run_workload() once per workload. Each WorkerSpec becomes one thread with its own
// lua_State (wrk's model: only plain values cross states). In every worker the script is
// loaded, then the global function named by the worker's role is called with the worker
// object `w` (w.qp, w.args, w:barrier(), ...). The data path runs in C++: a script crosses
// into it once per stream, not per work request.
//
// Script hooks, all optional except at least one role function:
//   setup(args) -> args     control state, before any worker starts: check and complete args
//   <role>(w) -> result     one per worker, e.g. initiator(w) and target(w); `run(w)` serves
//                           any role without its own function; a role with neither idles
//   report(results) -> t    control state, after all workers: results[worker] = {role, ok,
//                           error, result}; its return becomes WorkloadResult::summary
//
// Typical call for a scenario workload `{ qp: qa, script: builtin:write_bw, size: 64KiB }`
// where qa's peer qb is also local:
//
//   lua::WorkloadSpec spec;
//   spec.name = "write";
//   spec.script = "builtin:write_bw";
//   spec.args["size"] = 65536;  spec.args["local_mr"] = "ma";  spec.args["remote_mr"] = "mb";
//   spec.workers = {{"qa", "initiator", {"qa"}}, {"qb", "target", {"qb"}}};
//   lua::Callbacks cb;  cb.stop = &stop_flag;
//   lua::WorkloadResult r = lua::run_workload(spec, endpoints, cb);
//   // r.ok, r.error ("lua/write_bw.lua:40: QP 'qa': completion IBV_WC_REM_ACCESS_ERR ..."),
//   // r.workers[0].result["bw_avg"], r.summary
//
// A peer on another host runs its own run_workload() with its workers; Callbacks::barrier
// joins the hosts' barriers and Callbacks::gather brings every host's worker results to the
// host that runs report() (exec/workload_meeting.h).
#include <atomic>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "dataplane/cq_router.h"
#include "dataplane/endpoint.h"
#include "dataplane/stream.h"
#include "lua/value.h"
#include "lua/workload_spec.h"

namespace qpo::lua {

struct WorkerResult;

struct Callbacks {
  // Cross-host barrier: run by the last local worker to reach w:barrier(tag); returns when
  // every host is there. Empty = this process only. May throw to fail the workload.
  std::function<void(const std::string& tag)> barrier;
  // The executor's stop request (SIGINT): streams stop posting and drain, w:running() turns false.
  // A worker still busy in Lua code 3 s later (a loop that never asks w:running()) gets an
  // error at its next Lua instruction ("interrupted (SIGINT)").
  const std::atomic<bool>* stop = nullptr;
  // This host was told to stop (the run's phase timeout found it late): like `stop`, and a
  // worker busy in Lua code gets the error `*cancel_why` at once. `*cancel_why` is set before
  // `*cancel` turns true.
  const std::atomic<bool>* cancel = nullptr;
  const std::string* cancel_why = nullptr;
  // w:log() and print(); default: stderr, prefixed with the worker name.
  std::function<void(const std::string& worker, const std::string& line)> log;
  // Called about once a second from inside long streams (a live line on a TTY).
  std::function<void(const std::string& worker, const dataplane::StreamProgress&)> progress;
  // Cross-host: called once after this host's workers ended, with their results and the
  // local failure ("" when none); returns every host's workers' results (this host's
  // included) for report(). Throws when any host failed: the workload fails with that text.
  // Empty = this host's workers are all there is.
  std::function<std::vector<WorkerResult>(const std::vector<WorkerResult>& mine,
                                                 const std::string& error)>
      gather;
  // Cross-host w:signal() counters: adds this host's increments, returns every host's totals;
  // never waits for another host; false = not now (keep the increments). Empty = this host's
  // workers are all there is (a counter is then one atomic, as cheap as before).
  std::function<bool(const std::map<std::string, int64_t>& add, std::map<std::string, int64_t>* totals)> signals;
  // How each worker of spec.workers (in order) reads its QPs' CQs: the executor's router,
  // where every completion of the worker's QPs is routed to it, so that the run's other
  // readers of those CQs (op workloads beside the script) keep theirs. Empty: a router of the
  // workload's own, which drops completions of QPs no worker drives.
  std::vector<dataplane::CqAccess> access;
  // Starts a worker's thread in the caller's set (exec's stage: every thread of a stage's
  // workloads is one of its sides, exec/stage_sides.h); returns why it could not, or nullopt.
  // `body` never throws. run_workload then waits for its workers' bodies to end and leaves
  // the threads to the caller to join. Empty: run_workload starts and joins threads of its own.
  std::function<std::optional<std::string>(std::function<void()> body)> start;
};

struct WorkerResult {
  std::string name, role;
  bool ran = false;                // false: the script has no function for this role
  bool ok = false;
  std::string error;               // "lua/write_bw.lua:40: QP 'qa': completion IBV_WC_REM_ACCESS_ERR ..."
  std::string traceback;           // Lua stack traceback of the error
  std::string status;              // the IBV_WC_* name when the error was a bad completion
  std::string qp;                  // the QP the data path error names
  Value result;                    // what the role function returned (plain values)
};

struct WorkloadResult {
  bool ok = false;
  std::string error;               // the first failure: loading, setup, a worker, or report
  std::vector<WorkerResult> workers;
  Value summary;                   // report(results), or nil without a report function
};

// Never throws for script or data path problems: they come back in the result. Endpoints
// must stay valid (and their QPs up) until it returns; nothing is created or destroyed here.
WorkloadResult run_workload(const WorkloadSpec& spec, std::map<std::string, dataplane::Endpoint>& endpoints,
                            const Callbacks& cb = {});

// Loads the script in a sandboxed state and runs its top level and setup(args), without
// devices: syntax errors, missing role functions and bad args show up at `qpo validate`
// time. "" when fine, else the message (with file:line).
std::string check_workload(const WorkloadSpec& spec);

// Names usable as builtin:NAME ("write_bw", "examples/ud_incast", ...).
std::vector<std::string> builtin_workloads();

}  // namespace qpo::lua
