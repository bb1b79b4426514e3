// qp:stream{...} and qp:pingpong{...}: one call from Lua runs a whole bandwidth or latency
// test in the C++ engines (dataplane/stream.h, dataplane/pingpong.h).
#include <fstream>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <span>
#include <vector>

#include "dataplane/error.h"
#include "dataplane/names.h"
#include "dataplane/pingpong.h"
#include "dataplane/stream.h"
#include "lua/bindings.h"
#include "lua/guard.h"
#include "lua/runtime.h"
#include "util/workload_defaults.h"

namespace qpo::lua {

namespace dp = qpo::dataplane;

namespace {

// Calls the Lua function at stack index `fn` under the traceback handler at `handler`;
// a Lua error becomes a ScriptError carrying the script's own file:line.
[[noreturn]] void raise_from_stack(lua_State* L) {
  std::string msg = lua_tostring(L, -1) ? lua_tostring(L, -1) : "(error)";
  lua_pop(L, 1);
  auto at = msg.find("\nstack traceback:");
  throw ScriptError(at == std::string::npos ? msg : msg.substr(0, at));
}

void call_lua(lua_State* L, int fn, int handler, int nargs, int nresults) {
  lua_pushvalue(L, fn);
  if (nargs) lua_insert(L, -(nargs + 1));
  if (lua_pcall(L, nargs, nresults, handler) != LUA_OK) raise_from_stack(L);
}

// Stack slots a stream call keeps while the engine runs: the handler and the Lua callbacks.
struct Slots {
  int handler = 0, ready = 0, hook = 0;
};

Slots push_callbacks(lua_State* L, const Fields& f) {
  Slots s;
  lua_rawgeti(L, LUA_REGISTRYINDEX, ctx(L).traceback_ref);
  s.handler = lua_gettop(L);
  for (auto [key, slot] : {std::pair{"ready", &s.ready}, std::pair{"hook", &s.hook}}) {
    int t = f.push(key);
    if (t == LUA_TFUNCTION) {
      *slot = lua_gettop(L);
    } else {
      lua_pop(L, 1);
      if (t != LUA_TNIL) throw ArgError(f.call() + ": '" + key + "' must be a function");
    }
  }
  return s;
}

// One run of per-WR hook calls (see run_hook). Plain data only: a Lua error in the hook
// longjmps out of run_hook, past anything that would need a destructor.
struct HookRun {
  enum Bad { kNone, kBadCode, kUnknownOp };
  uint64_t first = 0;     // 0-based index of the first WR; the hook sees first + 1
  dp::WrEdit* out = nullptr;
  size_t n = 0;
  size_t filled = 0;      // WRs chosen; < n when the hook returned false or a bad op
  Bad bad = kNone;
  char name[48] = {};     // the unknown op's name
};

// Called under lua_pcall with (hook, HookRun*): asks the hook about WRs first + 1 .. first + n
// with a plain lua_call each, so a run pays for one protected call, not one per WR. Each call
// returns nothing (keep the template), false (end the stream), or op [, size [, offset
// [, remote_offset]]] where op is a name or a qpo.op code.
int run_hook(lua_State* L) {
  HookRun& run = *static_cast<HookRun*>(lua_touserdata(L, 2));
  for (; run.filled < run.n; ++run.filled) {
    lua_pushvalue(L, 1);
    lua_pushinteger(L, static_cast<lua_Integer>(run.first + run.filled + 1));
    lua_call(L, 1, 4);
    dp::WrEdit& e = run.out[run.filled];
    int t = lua_type(L, -4);
    if (t == LUA_TBOOLEAN && !lua_toboolean(L, -4)) return 0;
    if (t == LUA_TNUMBER) {
      lua_Integer code = lua_tointeger(L, -4);
      if (code < 0 || code >= static_cast<lua_Integer>(dp::Op::Recv)) {
        run.bad = HookRun::kBadCode;
        return 0;
      }
      e.op = static_cast<dp::Op>(code);
    } else if (t == LUA_TSTRING) {
      const char* name = lua_tostring(L, -4);
      auto op = dp::parse_op(name);
      if (!op) {
        std::snprintf(run.name, sizeof run.name, "%s", name);
        run.bad = HookRun::kUnknownOp;
        return 0;
      }
      e.op = *op;
    }
    if (lua_type(L, -3) == LUA_TNUMBER) e.size = static_cast<uint32_t>(lua_tointeger(L, -3));
    if (lua_type(L, -2) == LUA_TNUMBER) e.local_offset = static_cast<uint64_t>(lua_tointeger(L, -2));
    if (lua_type(L, -1) == LUA_TNUMBER) e.remote_offset = static_cast<uint64_t>(lua_tointeger(L, -1));
    lua_settop(L, 2);
  }
  return 0;
}

uint32_t u32(const Fields& f, const char* key, uint64_t dflt) {
  uint64_t v = f.size(key).value_or(dflt);
  if (v > UINT32_MAX) throw ArgError(f.call() + ": '" + key + "' is too large");
  return static_cast<uint32_t>(v);
}

int timeout_ms(const Fields& f, const char* key, int dflt_ms) {
  auto s = f.number(key);
  return s ? static_cast<int>(*s * 1000) : dflt_ms;
}

std::optional<uint64_t> check_seed(const Fields& f) {
  int t = f.push("check");
  std::optional<uint64_t> seed;
  if (t == LUA_TBOOLEAN) {
    if (lua_toboolean(f.L(), -1)) seed = 1;
  } else if (t == LUA_TNUMBER && lua_isinteger(f.L(), -1)) {
    seed = static_cast<uint64_t>(lua_tointeger(f.L(), -1));
  } else if (t != LUA_TNIL) {
    lua_pop(f.L(), 1);
    throw ArgError(f.call() + ": 'check' is a seed (integer) or true");
  }
  lua_pop(f.L(), 1);
  return seed;
}

dp::Op op_field(const Fields& f, const char* dflt) {
  std::string name = f.string("op").value_or(dflt);
  auto op = dp::parse_op(name);
  if (!op) throw ArgError(f.call() + ": unknown op '" + name + "' (" + dp::op_names() + ")");
  return *op;
}

// inline = true (whenever the QP allows), false, or a byte threshold (perftest -I).
uint32_t inline_field(const Fields& f, const dp::Endpoint& ep, uint32_t size) {
  int t = f.push("inline");
  uint32_t v = 0;
  if (t == LUA_TBOOLEAN) v = lua_toboolean(f.L(), -1) ? std::max(size, 1u) : 0;
  else if (t == LUA_TNUMBER) v = static_cast<uint32_t>(lua_tointeger(f.L(), -1));
  lua_pop(f.L(), 1);
  if (t != LUA_TNIL && t != LUA_TBOOLEAN && t != LUA_TNUMBER) throw ArgError(f.call() + ": 'inline' is true, false or a byte count");
  if (t == LUA_TBOOLEAN && v && size > ep.max_inline_data) v = 0;  // "when possible"
  return v;
}

void set(lua_State* L, const char* k, double v) {
  lua_pushnumber(L, v);
  lua_setfield(L, -2, k);
}
void set_int(lua_State* L, const char* k, uint64_t v) {
  lua_pushinteger(L, static_cast<lua_Integer>(v));
  lua_setfield(L, -2, k);
}

// The clock a timeline's buckets count on: CLOCK_MONOTONIC of this boot of this host
// (/proc/sys/kernel/random/boot_id). Timelines on one clock add up bucket by bucket.
const std::string& clock_id() {
  static const std::string id = [] {
    std::ifstream in("/proc/sys/kernel/random/boot_id");
    std::string s;
    std::getline(in, s);
    return s.empty() ? std::string("unknown") : s;
  }();
  return id;
}

// r.timeline = { clock = boot id, bucket = seconds, first = index, bytes = { ... } }: what
// perf.report_bw adds up for the workers' aggregate peak.
void push_timeline(lua_State* L, const dp::StreamTimeline& t) {
  lua_createtable(L, 0, 4);
  lua_pushstring(L, clock_id().c_str());
  lua_setfield(L, -2, "clock");
  set(L, "bucket", t.bucket_seconds);
  set_int(L, "first", t.first);
  lua_createtable(L, static_cast<int>(t.bytes.size()), 0);
  for (size_t i = 0; i < t.bytes.size(); ++i) {
    lua_pushinteger(L, static_cast<lua_Integer>(t.bytes[i]));
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
  lua_setfield(L, -2, "bytes");
  lua_setfield(L, -2, "timeline");
}


void push_error_table(lua_State* L, const dp::DataplaneError& e) {
  WorkerCtx& w = ctx(L);
  lua_createtable(L, 0, 4);
  lua_pushboolean(L, 0);
  lua_setfield(L, -2, "ok");
  luaL_where(L, 1);
  lua_pushstring(L, e.what());
  lua_concat(L, 2);
  lua_setfield(L, -2, "error");
  lua_pushstring(L, e.qp().c_str());
  lua_setfield(L, -2, "qp");
  if (e.kind() == dp::DataplaneError::Kind::Completion) {
    lua_pushstring(L, dp::wc_status_name(e.wc_status()));
    lua_setfield(L, -2, "status");
  }
  w.error_qp.clear();
  w.error_status.clear();
}

bool errors_return(const Fields& f) {
  std::string mode = f.string("errors").value_or("raise");
  if (mode != "raise" && mode != "return") throw ArgError(f.call() + ": errors = \"raise\" or \"return\"");
  return mode == "return";
}

// clock = "host" (the TSC, the default) or "device" (the send CQ's completion timestamps).
bool device_clock(const Fields& f) {
  std::string clock = f.string("clock").value_or("host");
  if (clock != "host" && clock != "device") throw ArgError(f.call() + ": clock = \"host\" or \"device\"");
  return clock == "device";
}

// qp:stream{op=, size=, iterations= | duration=, depth=, signal_every=, post_list=, ...} -> result
int l_stream(lua_State* L) {
  return guarded(L, [&] {
    dp::Endpoint& ep = check_qp(L, 1, "stream");
    WorkerCtx& w = ctx(L);
    Fields f(L, 2, "qp:stream{}");
    f.only({"op", "size", "iterations", "duration", "depth", "signal_every", "post_list", "inline", "fence", "solicited",
            "mr", "offset", "remote", "remote_offset", "imm", "compare", "swap", "add", "duplex", "rx_depth",
            "rx_iterations", "recv_mr", "recv_offset", "recv_batch", "check", "timeout", "idle", "events", "peak",
            "ready", "hook", "qps", "errors", "stop_when", "rate", "burst"});
    dp::StreamConfig c;
    c.op = op_field(f, "write");
    c.size = u32(f, "size", c.op == dp::Op::CmpSwap || c.op == dp::Op::FetchAdd ? 8 : util::kBandwidthDefaults.size);
    auto duration = f.number("duration");
    c.duration = duration.value_or(0);
    c.iterations = f.size("iterations").value_or(duration ? 0 : util::kBandwidthDefaults.iterations);
    c.depth = u32(f, "depth", util::kBandwidthDefaults.tx_depth);
    c.signal_every = u32(f, "signal_every", 1);
    c.post_list = u32(f, "post_list", 1);
    c.rate = f.number("rate").value_or(0);  // WRs per second over the stream; perf.lua turns 10Gb/s into it
    c.burst = u32(f, "burst", 0);
    c.inline_size = inline_field(f, ep, c.size);
    c.fence = f.boolean("fence").value_or(false);
    c.solicited = f.boolean("solicited").value_or(false);
    c.local_mr = f.string("mr").value_or("");
    c.local_offset = f.size("offset").value_or(0);
    c.remote_mr = f.string("remote").value_or("");
    c.remote_offset = f.size("remote_offset").value_or(0);
    c.imm = static_cast<uint32_t>(f.integer("imm").value_or(0));
    if (c.op == dp::Op::FetchAdd) c.compare_add = static_cast<uint64_t>(f.integer("add").value_or(1));
    if (c.op == dp::Op::CmpSwap) {
      c.compare_add = static_cast<uint64_t>(f.integer("compare").value_or(0));
      c.swap = static_cast<uint64_t>(f.integer("swap").value_or(0));
    }
    c.duplex = f.boolean("duplex").value_or(false);
    c.rx_depth = u32(f, "rx_depth", 0);
    c.rx_iterations = f.size("rx_iterations").value_or(0);
    c.recv_mr = f.string("recv_mr").value_or("");
    c.recv_offset = f.size("recv_offset").value_or(0);
    c.recv_batch = u32(f, "recv_batch", 0);
    c.check_seed = check_seed(f);
    c.timeout_ms = timeout_ms(f, "timeout", w.timeout_ms);
    c.idle_ms = timeout_ms(f, "idle", c.idle_ms);
    c.events = f.boolean("events").value_or(false);
    c.peak = f.boolean("peak").value_or(true);
    c.stop = w.shared ? &w.shared->stop : nullptr;
    bool soft = errors_return(f);
    // stop_when = {signal = "sent", count = 3}: the receive side ends once the counter
    // reaches count (read in C++, no Lua call while streaming) and receives went quiet.
    if (f.push("stop_when") == LUA_TTABLE) {
      Fields u(L, -1, "qp:stream{stop_when}");
      u.only({"signal", "count"});
      auto name = u.string("signal");
      auto count = u.integer("count");
      if (!name || !count) throw ArgError("qp:stream{}: stop_when = {signal = NAME, count = N}");
      if (!w.shared) throw ArgError("qp:stream{stop_when}: only inside a running workload");
      std::atomic<int64_t>* counter = &w.shared->signal(*name);
      int64_t want = *count;
      c.until = [counter, want] { return counter->load(std::memory_order_relaxed) >= want; };
    } else if (!lua_isnil(L, -1)) {
      throw ArgError("qp:stream{}: stop_when = {signal = NAME, count = N}");
    }
    lua_pop(L, 1);

    std::vector<dp::StreamLane> lanes{{&ep, &w.pool(ep)}};
    if (f.push("qps") == LUA_TTABLE) {
      int t = lua_gettop(L);
      for (lua_Integer i = 1; i <= static_cast<lua_Integer>(lua_rawlen(L, t)); ++i) {
        lua_rawgeti(L, t, i);
        dp::Endpoint& other = check_qp(L, -1, "stream{qps}");
        lua_pop(L, 1);
        lanes.push_back({&other, &w.pool(other)});
      }
    } else if (!lua_isnil(L, -1)) {
      throw ArgError("qp:stream{}: 'qps' is a list of Qp objects");
    }
    lua_pop(L, 1);

    Slots s = push_callbacks(L, f);
    if (s.ready) c.ready = [&] { call_lua(L, s.ready, s.handler, 0, 0); };
    if (s.hook) {
      // The per-WR mode, asked in runs: one protected call per run (run_hook), inside it one
      // plain lua_call per work request.
      c.hook_run = [&, L](uint64_t first, std::span<dp::WrEdit> out) -> size_t {
        HookRun run{first, out.data(), out.size()};
        lua_pushcfunction(L, run_hook);
        lua_pushvalue(L, s.hook);
        lua_pushlightuserdata(L, &run);
        if (lua_pcall(L, 2, 0, s.handler) != LUA_OK) raise_from_stack(L);
        if (run.bad == HookRun::kBadCode) throw ArgError("stream hook: bad op code");
        if (run.bad == HookRun::kUnknownOp) throw ArgError(std::string("stream hook: unknown op '") + run.name + "'");
        return run.filled;
      };
    }
    if (w.shared) {
      // The executor's progress line (when it has one), and the workload's progress count
      // that the other workers' barrier waits on.
      c.progress = [&w, last = uint64_t{0}](const dp::StreamProgress& p) mutable {
        if (p.ops + p.recv_ops != last) {
          last = p.ops + p.recv_ops;
          w.shared->progress.fetch_add(1);
        }
        if (w.shared->cb && w.shared->cb->progress) w.shared->cb->progress(w.name, p);
      };
    }

    dp::StreamResult r;
    try {
      r = dp::run_stream(lanes, c, w.access);
    } catch (const dp::DataplaneError& e) {
      if (!soft) throw;
      push_error_table(L, e);
      return 1;
    }
    lua_createtable(L, 0, 24);
    lua_pushboolean(L, 1);
    lua_setfield(L, -2, "ok");
    lua_pushstring(L, dp::op_name(c.op));
    lua_setfield(L, -2, "op");
    set_int(L, "size", c.size);
    set_int(L, "qps", lanes.size());
    if (c.op != dp::Op::Recv) {
      set_int(L, "iterations", r.tx.ops);
      set_int(L, "bytes", r.tx.bytes);
      set(L, "seconds", r.tx.seconds);
      set(L, "bw_peak", r.tx.bw_peak);
      set(L, "bw_avg", r.tx.bw_avg);
      set(L, "msg_rate", r.tx.msg_rate);
    }
    if (c.op == dp::Op::Recv || c.duplex) {
      set_int(L, "rx_iterations", r.rx.ops);
      set_int(L, "rx_bytes", r.rx.bytes);
      set(L, "rx_seconds", r.rx.seconds);
      set(L, "rx_bw_avg", r.rx.bw_avg);
      set(L, "rx_msg_rate", r.rx.msg_rate);
      set_int(L, "checked", r.rx_checked);
    }
    if (s.hook) set_int(L, "hook_calls", r.hook_calls);
    if (c.op != dp::Op::Recv && !r.timeline.bytes.empty()) push_timeline(L, r.timeline);
    if (!r.notes.empty()) {
      lua_createtable(L, static_cast<int>(r.notes.size()), 0);
      for (size_t i = 0; i < r.notes.size(); ++i) {
        lua_pushstring(L, r.notes[i].c_str());
        lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
      }
      lua_setfield(L, -2, "notes");
    }
    return 1;
  });
}

// qp:pingpong{op=, size=, iterations= | duration=, initiator=, ...} -> latency result
int l_pingpong(lua_State* L) {
  return guarded(L, [&] {
    dp::Endpoint& ep = check_qp(L, 1, "pingpong");
    WorkerCtx& w = ctx(L);
    Fields f(L, 2, "qp:pingpong{}");
    f.only({"op", "size", "iterations", "duration", "initiator", "inline", "signal_every", "mr", "offset", "remote",
            "remote_offset", "recv_offset", "rx_depth", "check", "timeout", "idle", "times", "ready", "errors", "clock"});
    dp::PingPongConfig c;
    c.op = op_field(f, "send");
    c.size = u32(f, "size", c.op == dp::Op::CmpSwap || c.op == dp::Op::FetchAdd ? 8 : util::kLatencyDefaults.size);
    auto duration = f.number("duration");
    c.duration = duration.value_or(0);
    c.iterations = f.size("iterations").value_or(duration ? 0 : util::kLatencyDefaults.iterations);
    c.initiator = f.boolean("initiator").value_or(true);
    c.inline_size = inline_field(f, ep, c.size);
    c.signal_every = u32(f, "signal_every", 0);
    c.local_mr = f.string("mr").value_or("");
    c.local_offset = f.size("offset").value_or(0);
    c.remote_mr = f.string("remote").value_or("");
    c.remote_offset = f.size("remote_offset").value_or(0);
    c.recv_offset = f.size("recv_offset").value_or(0);
    c.rx_depth = u32(f, "rx_depth", util::kLatencyDefaults.rx_depth);
    c.check_seed = check_seed(f);
    c.timeout_ms = timeout_ms(f, "timeout", w.timeout_ms);
    c.idle_ms = timeout_ms(f, "idle", c.idle_ms);
    c.keep_times = f.boolean("times").value_or(false);
    c.device_clock = device_clock(f);
    c.stop = w.shared ? &w.shared->stop : nullptr;
    bool soft = errors_return(f);
    Slots s = push_callbacks(L, f);
    if (s.ready) c.ready = [&] { call_lua(L, s.ready, s.handler, 0, 0); };

    dp::PingPongResult r;
    try {
      r = dp::run_pingpong({&ep, &w.pool(ep)}, c, w.access);
    } catch (const dp::DataplaneError& e) {
      if (!soft) throw;
      push_error_table(L, e);
      return 1;
    }
    lua_createtable(L, 0, 16);
    lua_pushboolean(L, 1);
    lua_setfield(L, -2, "ok");
    lua_pushstring(L, dp::op_name(c.op));
    lua_setfield(L, -2, "op");
    set_int(L, "size", c.size);
    set_int(L, "iterations", r.iterations);
    set(L, "seconds", r.seconds);
    lua_pushboolean(L, r.halved);
    lua_setfield(L, -2, "halved");
    lua_pushstring(L, r.device_clock ? "device" : "host");
    lua_setfield(L, -2, "clock");
    set_int(L, "checked", r.checked);
    if (r.lat.samples) {
      set_int(L, "samples", r.lat.samples);
      set(L, "t_min", r.lat.t_min);
      set(L, "t_max", r.lat.t_max);
      set(L, "t_typical", r.lat.t_typical);
      set(L, "t_avg", r.lat.t_avg);
      set(L, "t_stdev", r.lat.t_stdev);
      set(L, "p99", r.lat.p99);
      set(L, "p999", r.lat.p999);
      set(L, "far_from_median", r.lat.far_from_median);
      set(L, "bimodal_share", r.lat.bimodal_share);
    }
    if (c.keep_times) {
      // Every iteration's latency in order (usec), as perftest -U prints them.
      lua_createtable(L, static_cast<int>(std::min<size_t>(r.times_us.size(), INT32_MAX)), 0);
      for (size_t i = 0; i < r.times_us.size(); ++i) {
        lua_pushnumber(L, r.times_us[i]);
        lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
      }
      lua_setfield(L, -2, "times");
    }
    return 1;
  });
}

}  // namespace

void open_stream(lua_State* L) {
  static const luaL_Reg fns[] = {{"stream", l_stream}, {"pingpong", l_pingpong}, {nullptr, nullptr}};
  add_qp_methods(L, fns);
}

}  // namespace qpo::lua
