#include "lua/workload.h"

#include <lua.hpp>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>

#include "dataplane/recv_pool.h"
#include "lua/bindings.h"
#include "lua/convert.h"
#include "lua/embedded.h"
#include "lua/guard.h"
#include "lua/interrupt.h"
#include "lua/isolate.h"
#include "lua/limits.h"
#include "lua/runtime.h"
#include "lua/state.h"
#include "util/cpu_pin.h"
#include "util/thread_group.h"

namespace qpo::lua {

namespace {

Policy policy_for(const WorkloadSpec& spec, const ScriptSource& src) {
  Policy p;
  p.sandbox = spec.sandbox;
  if (!src.dir.empty()) p.allowed_dirs.push_back(src.dir);
  for (const auto& d : spec.lua_path) p.allowed_dirs.push_back(d);
  return p;
}

// The function a worker runs: its role's, else run(), else none (idle).
std::string entry_for(const State& s, const std::string& role) {
  if (s.has_function(role)) return role;
  if (s.has_function("run")) return "run";
  return "";
}

std::string check_spec(const WorkloadSpec& spec, const std::map<std::string, dataplane::Endpoint>* endpoints) {
  if (spec.workers.empty()) return "workload '" + spec.name + "' has no workers";
  std::set<std::string> names;
  for (const auto& w : spec.workers) {
    if (w.name.empty()) return "a worker without a name";
    if (!names.insert(w.name).second) return "two workers named '" + w.name + "'";
    if (w.role.empty() || w.role == "setup" || w.role == "report")
      return "worker '" + w.name + "': role '" + w.role + "' is not a valid role function name";
    if (!endpoints) continue;
    for (const auto& q : w.qps)
      if (!endpoints->count(q)) return "worker '" + w.name + "': no endpoint for QP '" + q + "'";
  }
  if (!endpoints) return "";
  // An SRQ's receive pool is driven by one thread: QPs on one SRQ belong to one worker.
  std::map<ibv_srq*, std::string> srq_owner;
  for (const auto& w : spec.workers)
    for (const auto& q : w.qps) {
      ibv_srq* srq = endpoints->at(q).srq;
      if (!srq) continue;
      auto [it, fresh] = srq_owner.emplace(srq, w.name);
      if (!fresh && it->second != w.name)
        return "workers '" + it->second + "' and '" + w.name + "' both drive QPs of one SRQ (QP '" + q +
               "'): give QPs that share an SRQ to one worker";
    }
  return "";
}

// Loads the script into the control state and completes the args with setup(args).
// `limits`, when set, is told which part runs (for its message).
Value control_setup(State& control, const ScriptSource& src, const WorkloadSpec& spec, Limits* limits = nullptr) {
  control.run_chunk(src.text, src.chunkname);
  if (limits) limits->phase = "setup()";
  bool any = false;
  for (const auto& w : spec.workers) any |= !entry_for(control, w.role).empty();
  if (!any) {
    std::string roles;
    for (const auto& w : spec.workers) roles += (roles.empty() ? "" : ", ") + w.role;
    throw ScriptError(src.chunkname.substr(1) + ": defines no function for any role (" + roles + ") and no run()");
  }
  if (!control.has_function("setup")) return spec.args;
  Value completed = control.call("setup", spec.args.is_table() ? spec.args : Value::table());
  return completed.is_nil() ? spec.args : completed;
}

}  // namespace

int64_t Shared::add_signal(const std::string& name, int64_t n) {
  if (!cb || !cb->signals) return signal(name).fetch_add(n) + n;
  int64_t now;
  {
    std::lock_guard lock(signals_mutex);
    unsent[name] += n;
    now = counter_locked(name).fetch_add(n) + n;
  }
  sync_signals(false);  // at once when the channel is free; else the relay's next sync
  return now;
}

bool Shared::sync_signals(bool wait) {
  if (!cb || !cb->signals) return true;
  std::unique_lock sync(sync_mutex, std::defer_lock);
  if (wait) sync.lock();
  else if (!sync.try_lock()) return false;
  auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  for (;;) {
    std::map<std::string, int64_t> add, totals;
    {
      std::lock_guard lock(signals_mutex);
      add.swap(unsent);
    }
    bool ok = cb->signals(add, &totals);
    std::lock_guard lock(signals_mutex);
    if (ok) {
      // Increments made while the answer was on its way are in `unsent` and in the counter.
      for (const auto& [name, total] : totals) {
        auto it = unsent.find(name);
        counter_locked(name).store(total + (it == unsent.end() ? 0 : it->second));
      }
      return true;
    }
    for (const auto& [name, n] : add) unsent[name] += n;
    if (!wait || std::chrono::steady_clock::now() > give_up) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

namespace {

struct Joiner {
  std::mutex m;
  std::condition_variable cv;
  int running = 0;
  std::vector<char> busy;           // per worker: its thread has not ended
  std::vector<pthread_t> handles;   // per worker: its thread
};

// How long a worker may keep running Lua code after a SIGINT (a loop that ends when
// w:running() turns false, returning partial results) before it is interrupted.
constexpr auto kStopGrace = std::chrono::seconds(3);

// The control state of a run holds the script, setup()'s args and report()'s copy of every
// worker's results.
constexpr size_t kControlStateBytes = size_t{1} << 30;

// The script's top level, setup() and report() run on the executor's thread, in the control
// state: while they run, a watcher interrupts them as the relay interrupts workers (at once
// when this host is told to stop, after kStopGrace on SIGINT), so code that never returns
// cannot hold the run.
class ControlWatch {
 public:
  ControlWatch(const Callbacks& cb, std::string& why) : cb_(cb), why_(why), self_(pthread_self()) {
    if (!cb.stop && !cb.cancel) return;
    // No watcher, no way to stop a script that never returns: the caller's catch fails the workload.
    if (auto why = thread_.start([this] { watch(); })) throw std::runtime_error("could not start the script's watcher: " + *why);
  }
  ~ControlWatch() {
    {
      std::lock_guard lock(m_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  ControlWatch(const ControlWatch&) = delete;
  ControlWatch& operator=(const ControlWatch&) = delete;

 private:
  void watch() {
    std::unique_lock lock(m_);
    std::chrono::steady_clock::time_point stop_seen{};
    bool interrupting = false;
    while (!cv_.wait_for(lock, std::chrono::milliseconds(250), [&] { return done_; })) {
      bool cancel = cb_.cancel && cb_.cancel->load(std::memory_order_acquire);
      if (!cancel && !(cb_.stop && cb_.stop->load())) continue;
      auto now = std::chrono::steady_clock::now();
      if (stop_seen == std::chrono::steady_clock::time_point{}) stop_seen = now;
      if (!interrupting && (cancel || now - stop_seen >= kStopGrace)) {
        if (why_.empty()) why_ = cancel && cb_.cancel_why ? *cb_.cancel_why : "interrupted (SIGINT)";
        interrupting = true;
      }
      if (interrupting) interrupt(self_);  // a no-op once report() returned (its scope closed)
    }
  }

  const Callbacks& cb_;
  std::string& why_;
  pthread_t self_;
  std::mutex m_;
  std::condition_variable cv_;
  bool done_ = false;
  util::ThreadGroup thread_;  // last: its thread uses the members above
};

}  // namespace

WorkloadResult run_workload(const WorkloadSpec& spec, std::map<std::string, dataplane::Endpoint>& endpoints,
                            const Callbacks& cb) {
  WorkloadResult out;
  if (auto e = check_spec(spec, &endpoints); !e.empty()) {
    out.error = e;
    return out;
  }
  Shared shared;
  shared.spec = &spec;
  shared.endpoints = &endpoints;
  shared.cb = &cb;
  WorkerCtx control_ctx;
  control_ctx.shared = &shared;
  control_ctx.timeout_ms = spec.timeout_ms;

  ScriptSource src;
  Value args;
  std::vector<std::string> entries;
  Policy policy, control_policy;
  // The control state's top level and setup() get validate's time limit (they are the code
  // validate ran) and a memory bound that leaves room for report()'s copy of the results.
  Limits control_limits;
  control_limits.bytes = kControlStateBytes;
  std::unique_ptr<State> control;
  try {
    src = resolve_script(spec.script, spec.source);
    policy = policy_for(spec, src);
    control_policy = policy;
    control_policy.limits = &control_limits;
    control = std::make_unique<State>(control_ctx, control_policy);
    {
      ControlWatch watch(cb, shared.interrupt_why);
      InterruptScope scope(control->get(), &shared.interrupt_why);  // its end disarms the deadline too
      control_limits.phase = "the script's top level";
      arm_deadline(control->get(), control_limits);
      args = control_setup(*control, src, spec, &control_limits);
      if (std::string hit = control_limits.exceeded(); !hit.empty()) throw ScriptError(hit);
    }
    for (const auto& w : spec.workers) entries.push_back(entry_for(*control, w.role));
  } catch (const std::exception& e) {
    std::string hit = control_limits.exceeded();
    out.error = !hit.empty() && std::string(e.what()).find(hit) == std::string::npos ? hit : e.what();
    return out;
  }

  // Completions of QPs driven by different workers may share a CQ: route them (the
  // executor's router has them routed already).
  if (!cb.access.empty() && cb.access.size() != spec.workers.size()) {
    out.error = "internal error: " + std::to_string(cb.access.size()) + " CQ readers for " +
                std::to_string(spec.workers.size()) + " workers";
    return out;
  }
  int active = 0;
  for (size_t i = 0; i < spec.workers.size(); ++i) {
    if (entries[i].empty()) continue;
    ++active;
    if (!cb.access.empty()) continue;
    for (const auto& q : spec.workers[i].qps) {
      const auto& ep = endpoints.at(q);
      if (!ep.qp) continue;
      if (ep.send_cq) shared.router.assign(ep.send_cq, ep.qp->qp_num, static_cast<int>(i));
      if (ep.recv_cq) shared.router.assign(ep.recv_cq, ep.qp->qp_num, static_cast<int>(i));
    }
  }
  shared.barrier.reset(active);
  // Receive pools outlive the workload (see Endpoint::recv_pool); QPs on one SRQ share one.
  for (const auto& ws : spec.workers)
    for (const auto& q : ws.qps) {
      auto& ep = endpoints.at(q);
      if (ep.recv_pool) continue;
      if (ep.srq)
        for (auto& [name, other] : endpoints)
          if (other.srq == ep.srq && other.recv_pool) ep.recv_pool = other.recv_pool;
      if (!ep.recv_pool) ep.recv_pool = std::make_shared<dataplane::RecvPool>();
    }

  out.workers.resize(spec.workers.size());
  std::mutex first_error_m;
  std::string first_error;
  Joiner join;
  join.busy.assign(spec.workers.size(), 0);
  join.handles.resize(spec.workers.size());
  // A worker that failed (or never started) stops the others and leaves the join count.
  // It runs on the worker's thread and must not throw: the join below waits for its count.
  auto end_worker = [&](size_t i) noexcept {
    WorkerResult& res = out.workers[i];
    if (!res.ok) {
      shared.stop.store(true);
      try {  // the messages allocate; stopping the others must not depend on them
        {
          std::lock_guard lock(first_error_m);
          if (first_error.empty()) first_error = "worker '" + res.name + "' (" + res.role + "): " + res.error;
        }
        shared.barrier.break_barrier("worker '" + res.name + "' failed");
      } catch (...) {
        shared.barrier.break_barrier("a worker failed");
      }
    }
    shared.barrier.drop();
    std::lock_guard lock(join.m);
    --join.running;
    join.busy[i] = 0;
    join.cv.notify_all();
  };
  // Worker i's whole life on its thread. end_worker is its last act: once the last one has
  // run, this function may return (and its locals go) while the thread is still unwinding.
  auto work = [&](size_t i) noexcept {
    {
      std::lock_guard lock(join.m);  // the relay interrupts a busy worker by this handle
      join.handles[i] = pthread_self();
      join.busy[i] = 1;
    }
    const WorkerSpec& ws = spec.workers[i];
    WorkerResult& res = out.workers[i];
    {
      WorkerCtx w;
      try {  // everything, so that end_worker always runs: the join waits for it
        w.shared = &shared;
        w.name = ws.name;
        w.role = ws.role;
        const auto& everyone = spec.all_workers.empty() ? spec.workers : spec.all_workers;
        w.index = static_cast<int>(i) + 1;
        for (size_t k = 0; k < everyone.size(); ++k)
          if (everyone[k].name == ws.name) w.index = static_cast<int>(k) + 1;
        w.count = static_cast<int>(everyone.size());
        w.qps = ws.qps;
        w.access = cb.access.empty() ? dataplane::CqAccess{&shared.router, static_cast<int>(i)} : cb.access[i];
        w.timeout_ms = spec.timeout_ms;
        if (ws.cpu >= 0)
          if (std::string why = util::pin_this_thread(ws.cpu); !why.empty()) throw std::runtime_error("pin: " + why);
        State state(w, policy);
        InterruptScope scope(state.get(), &shared.interrupt_why);
        state.run_chunk(src.text, src.chunkname);
        res.result = state.call(entries[i], [&](lua_State* L) {
          push_worker(L, w, args);
          return 1;
        });
        res.ok = true;
      } catch (const ScriptError& e) {
        res.error = e.what();
        res.traceback = e.traceback;
      } catch (const std::exception& e) {
        res.error = e.what();
      } catch (...) {
        res.error = "an exception that is not a std::exception";
      }
      if (!res.ok) {
        res.status = w.error_status;
        try {
          res.qp = w.error_qp;
        } catch (...) {  // the QP's name is detail; end_worker must run
        }
      }
    }
    end_worker(i);
  };
  util::ThreadGroup threads;  // the workers' threads when the caller keeps none (cb.start)
  // Whatever leaves this function early (a relay's signals sync that throws, no memory)
  // first stops the workers and waits for their bodies: they use its locals, and with
  // cb.start their threads are the caller's, joined after it returns.
  struct WorkersEnded {
    Shared& shared;
    Joiner& join;
    bool armed = true;  // off once the relay saw every body end
    ~WorkersEnded() {
      if (!armed) return;
      shared.stop.store(true);
      try {
        shared.barrier.break_barrier("the workload ended early");
        if (shared.interrupt_why.empty()) shared.interrupt_why = "the workload ended early";
      } catch (...) {
      }
      // As the relay does: a worker busy in Lua code that never asks w:running() is
      // interrupted, again at each wake-up (one between two scopes ignores it).
      std::unique_lock lock(join.m);
      while (!join.cv.wait_for(lock, std::chrono::milliseconds(250), [&] { return join.running == 0; }))
        for (size_t i = 0; i < join.busy.size(); ++i)
          if (join.busy[i]) interrupt(join.handles[i]);
    }
  };
  WorkersEnded ended_early{shared, join};
  for (size_t i = 0; i < spec.workers.size(); ++i) {
    WorkerResult& r = out.workers[i];
    r.name = spec.workers[i].name;
    r.role = spec.workers[i].role;
    if (entries[i].empty()) {
      control_ctx.log("worker '" + r.name + "': the script has no '" + r.role + "' function; idle");
      continue;
    }
    r.ran = true;
    {
      std::lock_guard lock(join.m);
      ++join.running;  // before the thread exists: the relay below waits for it
    }
    auto body = [&work, i] { work(i); };
    bool started = false;
    try {  // counted already: whatever fails here ends it as a worker that did not start
      auto not_started = cb.start ? cb.start(body) : threads.start(body);
      started = !not_started;
      if (not_started) r.error = *not_started;
    } catch (const std::exception& e) {
      try {
        r.error = std::string("cannot start a thread: ") + e.what();
      } catch (...) {
      }
    } catch (...) {
    }
    if (started) continue;
    try {
      if (r.error.empty()) r.error = "cannot start a thread";
    } catch (...) {  // end_worker must run: the relay and the guard wait for it
    }
    end_worker(i);
  }
  {
    // This thread only relays the executor's stop flag and this host's stop request, and
    // interrupts workers that stay busy in Lua code (lua/interrupt.h): at once when the host
    // was told to stop, after kStopGrace for a SIGINT. It wakes rarely: on a small machine
    // a frequent wake-up preempts a worker that is spinning on a CQ (and may migrate it).
    std::unique_lock lock(join.m);
    std::chrono::steady_clock::time_point stop_seen{};
    bool interrupting = false;
    while (join.running > 0) {
      if (!cb.stop && !cb.cancel && !cb.signals) {
        join.cv.wait(lock, [&] { return join.running == 0; });
        break;
      }
      join.cv.wait_for(lock, std::chrono::milliseconds(cb.signals ? 100 : 250));
      if (cb.signals && join.running > 0) {
        lock.unlock();  // a sync is a round trip with agents: let workers end meanwhile
        shared.sync_signals(false);
        lock.lock();
      }
      bool cancel = cb.cancel && cb.cancel->load(std::memory_order_acquire);
      if (!cancel && !(cb.stop && cb.stop->load())) continue;
      shared.stop.store(true);
      auto now = std::chrono::steady_clock::now();
      if (stop_seen == std::chrono::steady_clock::time_point{}) stop_seen = now;
      if (!interrupting && (cancel || now - stop_seen >= kStopGrace)) {
        shared.interrupt_why = cancel && cb.cancel_why ? *cb.cancel_why : "interrupted (SIGINT)";
        interrupting = true;
      }
      // Again at every wake-up: a worker between two scopes (or not yet in one) ignores it.
      if (interrupting)
        for (size_t i = 0; i < join.busy.size(); ++i)
          if (join.busy[i]) interrupt(join.handles[i]);
    }
  }
  ended_early.armed = false;  // every body has ended
  threads.join();

  out.ok = first_error.empty();
  out.error = first_error;
  shared.sync_signals(true);  // the last increments reach the other hosts before the results
  if (cb.gather) {
    // The workload spans hosts: report() sees every host's workers, and a failure elsewhere
    // fails the workload here too.
    try {
      out.workers = cb.gather(out.workers, first_error);
    } catch (const std::exception& e) {
      if (out.ok) out.error = e.what();
      out.ok = false;
    }
  }
  bool has_report = false;
  try {
    has_report = control->has_function("report");  // the lookup runs the script's metamethods
  } catch (const std::exception& e) {
    if (out.ok) out.error = std::string("report(): ") + e.what();
    out.ok = false;
  }
  if (has_report) {
    Value results = Value::table();
    for (const auto& r : out.workers) {
      Value& v = results[r.name];
      v["role"] = r.role;
      v["ok"] = r.ok;
      v["ran"] = r.ran;
      if (!r.error.empty()) v["error"] = r.error;
      if (!r.status.empty()) v["status"] = r.status;
      v["result"] = r.result;
    }
    try {
      ControlWatch watch(cb, shared.interrupt_why);
      InterruptScope scope(control->get(), &shared.interrupt_why);
      out.summary = control->call("report", results);
    } catch (const std::exception& e) {
      if (out.ok) out.error = std::string("report(): ") + e.what();
      out.ok = false;
    }
  }
  return out;
}

namespace {

// The check itself, in the child of run_isolated: a limited state, the deadline armed.
std::string check_in_child(const WorkloadSpec& spec, Limits& limits) {
  try {
    ScriptSource src = resolve_script(spec.script, spec.source);
    Policy policy = policy_for(spec, src);
    WorkerCtx control_ctx;
    control_ctx.timeout_ms = spec.timeout_ms;
    policy.limits = &limits;
    State control(control_ctx, policy);
    limits.phase = "the script's top level";
    arm_deadline(control.get(), limits);
    control_setup(control, src, spec, &limits);
  } catch (const std::exception& e) {
    // A limit hit shows as Lua's own error ("not enough memory", or a later error of a
    // script that caught ours with pcall): name the limit instead.
    std::string limit = limits.exceeded();
    if (!limit.empty() && std::string(e.what()).find(limit) == std::string::npos) return limit;
    return e.what();
  }
  // `return pcall(loop)` catches the limit's error and returns without another instruction
  // for the hook to raise it again: a limit that was hit fails the check all the same.
  return limits.exceeded();
}

}  // namespace

std::string check_workload(const WorkloadSpec& spec) {
  if (auto e = check_spec(spec, nullptr); !e.empty()) return e;
  Limits limits;  // validate runs user code with no device and no timeout behind it: bound it
  return run_isolated([&] { return check_in_child(spec, limits); }, limits.time,
                      "the script's top level or setup()");
}

std::vector<std::string> builtin_workloads() { return builtin_names(); }

}  // namespace qpo::lua
