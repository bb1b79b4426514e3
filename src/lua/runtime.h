#pragma once
// What a lua_State's bindings reach through the state's extra space: the worker it belongs
// to and what all workers of the run share. Internal to src/lua.
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "dataplane/cq_router.h"
#include "dataplane/endpoint.h"
#include "dataplane/recv_pool.h"
#include "lua/barrier.h"
#include "lua/workload.h"

struct lua_State;

namespace qpo::lua {

struct Shared {
  const WorkloadSpec* spec = nullptr;
  std::map<std::string, dataplane::Endpoint>* endpoints = nullptr;
  const Callbacks* cb = nullptr;
  dataplane::CqRouter router;
  Barrier barrier;
  std::atomic<bool> stop{false};  // the executor's stop, or a worker failed
  // Bumped when a stream of this host's workers reports completions it had not reported
  // before (once a second at most per stream): a barrier waits as long as it moves.
  std::atomic<uint64_t> progress{0};
  // What a worker still busy in Lua code raises when interrupted (lua/interrupt.h); written
  // once, before the first interrupt.
  std::string interrupt_why;
  std::mutex log_mutex;
  // w:signal(name) counters, for workers to tell each other "done" without a barrier (a
  // receive stream can watch one while it runs). Across hosts (cb->signals set) a counter
  // shows every host's total: this host's increments go out at once (or with the next sync
  // when the channel is busy), the other hosts' come in with every sync (run_workload's
  // relay thread syncs every 100 ms while workers run, and once more before the results).
  std::mutex signals_mutex;
  std::map<std::string, std::unique_ptr<std::atomic<int64_t>>> signals;
  std::map<std::string, int64_t> unsent;  // across hosts: this host's increments not yet sent
  std::mutex sync_mutex;                  // one sync with the other hosts at a time
  std::atomic<int64_t>& signal(const std::string& name) {
    std::lock_guard lock(signals_mutex);
    return counter_locked(name);
  }
  // w:signal(name, n): the counter's new value.
  int64_t add_signal(const std::string& name, int64_t n);
  // Sends this host's unsent increments and takes every host's totals. `wait`: until the
  // channel answers (gives up after a second); else only if the channel is free now.
  bool sync_signals(bool wait);

 private:
  std::atomic<int64_t>& counter_locked(const std::string& name) {
    auto& p = signals[name];
    if (!p) p = std::make_unique<std::atomic<int64_t>>(0);
    return *p;
  }
};

constexpr size_t kMaxScriptLine = 4096, kMaxScriptOutput = size_t{1} << 20;

struct WorkerCtx {
  Shared* shared = nullptr;
  std::string name = "control", role;
  int index = 0, count = 0;
  std::vector<std::string> qps;                    // endpoints this worker may drive
  dataplane::CqAccess access;
  int timeout_ms = 10000;
  std::string error_status, error_qp;              // from the last data path error
  int traceback_ref = 0;                           // registry ref of the message handler
  std::string unfinished_line;                     // io.write text after its last newline
  size_t output_shown = 0, output_cut = 0, lines_cut = 0;

  dataplane::Endpoint* endpoint(const std::string& name) const;
  // The endpoint's receive pool (run_workload creates them before the workers start).
  dataplane::RecvPool& pool(dataplane::Endpoint& ep);
  void log(const std::string& line) const;
  // print(), qpo.log() and io.write(): the script's output goes to log() (stderr, marked with
  // the worker's name), never to stdout, which may carry a JSON document. Each line is made
  // printable and cut at kMaxScriptLine bytes; past kMaxScriptOutput bytes per state the rest
  // is counted, not shown. script_write completes lines (io.write); flush_script_output shows
  // an unfinished line and the count of what was cut (the destructor calls it).
  void script_line(std::string_view line);
  void script_write(std::string_view text);
  void flush_script_output();
  WorkerCtx() = default;
  WorkerCtx(const WorkerCtx&) = delete;
  WorkerCtx& operator=(const WorkerCtx&) = delete;
  ~WorkerCtx() { flush_script_output(); }
  bool stopping() const { return shared && shared->stop.load(std::memory_order_relaxed); }
};

// The WorkerCtx a state was created for (stored in lua_getextraspace).
WorkerCtx& ctx(lua_State* L);

}  // namespace qpo::lua
