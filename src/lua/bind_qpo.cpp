// The global `qpo` table: what every state (workers and control) gets.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include "dataplane/clock.h"
#include "dataplane/names.h"
#include "dataplane/op.h"
#include "dataplane/recv_pool.h"
#include "dataplane/stats.h"
#include "lua/bindings.h"
#include "lua/guard.h"
#include "lua/runtime.h"
#include "util/workload_defaults.h"
#include "util/quantities.h"

namespace qpo::lua {

namespace dp = qpo::dataplane;

dp::Endpoint* WorkerCtx::endpoint(const std::string& n) const {
  if (!shared || !shared->endpoints) return nullptr;
  auto it = shared->endpoints->find(n);
  return it == shared->endpoints->end() ? nullptr : &it->second;
}

dp::RecvPool& WorkerCtx::pool(dp::Endpoint& ep) {
  // Normally created by run_workload; a lone state (tests) gets one on first use.
  if (!ep.recv_pool) ep.recv_pool = std::make_shared<dp::RecvPool>();
  return *ep.recv_pool;
}

void WorkerCtx::log(const std::string& line) const {
  if (shared && shared->cb && shared->cb->log) {
    shared->cb->log(name, line);
    return;
  }
  static std::mutex m;
  std::lock_guard lock(shared ? shared->log_mutex : m);
  std::fprintf(stderr, "[%s] %s\n", name.c_str(), line.c_str());
}

namespace {

// qpo.now() -> seconds (float) on the data path's clock (the TSC, like perftest).
int l_now(lua_State* L) {
  lua_pushnumber(L, dp::clock::to_seconds(dp::clock::ticks()));
  return 1;
}

int l_ticks(lua_State* L) {
  lua_pushinteger(L, static_cast<lua_Integer>(dp::clock::ticks()));
  return 1;
}

int l_ticks_per_second(lua_State* L) {
  lua_pushnumber(L, dp::clock::ticks_per_second());
  return 1;
}

// qpo.sleep(seconds): returns early when the run is stopping.
int l_sleep(lua_State* L) {
  return guarded(L, [&] {
    if (lua_type(L, 1) != LUA_TNUMBER) throw ArgError("qpo.sleep(seconds): expected a number");
    double s = lua_tonumber(L, 1);
    auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(s);
    WorkerCtx& w = ctx(L);
    while (std::chrono::steady_clock::now() < until && !w.stopping())
      std::this_thread::sleep_for(std::min<std::chrono::duration<double>>(until - std::chrono::steady_clock::now(),
                                                                           std::chrono::milliseconds(50)));
    return 0;
  });
}

void set_number(lua_State* L, const char* k, double v) {
  lua_pushnumber(L, v);
  lua_setfield(L, -2, k);
}

// qpo.stats({usec...}) -> {samples, t_min, t_max, t_typical, t_avg, t_stdev, p99, p999,
//                          far_from_median, bimodal_share}
int l_stats(lua_State* L) {
  return guarded(L, [&] {
    if (lua_type(L, 1) != LUA_TTABLE) throw ArgError("qpo.stats(samples): expected a list of numbers");
    std::vector<double> us;
    lua_Integer n = static_cast<lua_Integer>(lua_rawlen(L, 1));
    us.reserve(static_cast<size_t>(n));
    for (lua_Integer i = 1; i <= n; ++i) {
      lua_rawgeti(L, 1, i);
      if (lua_type(L, -1) != LUA_TNUMBER) throw ArgError("qpo.stats: element " + std::to_string(i) + " is not a number");
      us.push_back(lua_tonumber(L, -1));
      lua_pop(L, 1);
    }
    dp::LatencyStats s = dp::latency_stats(us);
    lua_createtable(L, 0, 10);
    lua_pushinteger(L, static_cast<lua_Integer>(s.samples));
    lua_setfield(L, -2, "samples");
    set_number(L, "t_min", s.t_min);
    set_number(L, "t_max", s.t_max);
    set_number(L, "t_typical", s.t_typical);
    set_number(L, "t_avg", s.t_avg);
    set_number(L, "t_stdev", s.t_stdev);
    set_number(L, "p99", s.p99);
    set_number(L, "p999", s.p999);
    set_number(L, "far_from_median", s.far_from_median);
    set_number(L, "bimodal_share", s.bimodal_share);
    return 1;
  });
}

// A number field of the table at `index`, >= 0 (absent, negative or NaN: 0); anything but a
// number there is refused.
double nonnegative_field(lua_State* L, int index, const char* key, const std::string& where) {
  lua_getfield(L, index, key);
  if (!lua_isnil(L, -1) && lua_type(L, -1) != LUA_TNUMBER) throw ArgError(where + "." + key + " is not a number");
  double v = lua_tonumber(L, -1);
  lua_pop(L, 1);
  return v > 0 ? v : 0;
}

uint64_t count_field(lua_State* L, int index, const char* key, const std::string& where) {
  return static_cast<uint64_t>(std::min(nonnegative_field(L, index, key, where), 9.2e18));
}

// qpo.together({ {iterations =, bytes =, seconds =}, ... }) -> {iterations, bytes, seconds,
// bw_avg, msg_rate}: runs that went at the same time, as one (dataplane/stats.h together:
// the bytes of all of them over the longest one's time), as op workloads on a group report.
int l_together(lua_State* L) {
  return guarded(L, [&] {
    if (lua_type(L, 1) != LUA_TTABLE) throw ArgError("qpo.together(runs): expected a list of runs");
    std::vector<dp::BandwidthStats> runs;
    lua_Integer n = static_cast<lua_Integer>(lua_rawlen(L, 1));
    for (lua_Integer i = 1; i <= n; ++i) {
      std::string where = "qpo.together: run " + std::to_string(i);
      lua_rawgeti(L, 1, i);
      if (lua_type(L, -1) != LUA_TTABLE) throw ArgError(where + " is not a table");
      dp::BandwidthStats r;
      r.ops = count_field(L, -1, "iterations", where);
      r.bytes = count_field(L, -1, "bytes", where);
      r.seconds = nonnegative_field(L, -1, "seconds", where);
      lua_pop(L, 1);
      runs.push_back(r);
    }
    dp::BandwidthStats t = dp::together(runs);
    lua_createtable(L, 0, 5);
    lua_pushinteger(L, static_cast<lua_Integer>(t.ops));
    lua_setfield(L, -2, "iterations");
    lua_pushinteger(L, static_cast<lua_Integer>(t.bytes));
    lua_setfield(L, -2, "bytes");
    set_number(L, "seconds", t.seconds);
    set_number(L, "bw_avg", t.bw_avg);
    set_number(L, "msg_rate", t.msg_rate);
    return 1;
  });
}

// qpo.size("64KiB") -> 65536
int l_size(lua_State* L) {
  return guarded(L, [&] {
    if (lua_type(L, 1) == LUA_TNUMBER && lua_isinteger(L, 1)) {
      lua_pushvalue(L, 1);
      return 1;
    }
    std::string text = lua_type(L, 1) == LUA_TSTRING ? lua_tostring(L, 1) : "";
    lua_pushinteger(L, static_cast<lua_Integer>(parse_size(text, "qpo.size('" + text + "')")));
    return 1;
  });
}

// qpo.rate("10Gb/s") -> {bytes = 1.25e9}; qpo.rate("0.5Mpps") -> {messages = 5e5} (per second).
// The units are the thresholds' (util/quantities.h); a bare number has none and is refused.
int l_rate(lua_State* L) {
  // The value as text, whatever its type (a number has no unit either). luaL_tolstring may
  // raise, so it runs before any C++ object exists in this frame.
  luaL_tolstring(L, 1, nullptr);
  return guarded(L, [&] {
    std::string text = lua_tostring(L, -1);
    // Every unit ends in a letter ("Gb/s", "Mpps"); "1e3" does not, and a bare number has none.
    bool has_unit = !text.empty() && std::isalpha(static_cast<unsigned char>(text.back()));
    auto bw = has_unit ? util::parse_limit(util::LimitUnit::Bandwidth, text) : std::nullopt;
    auto mps = has_unit && !bw ? util::parse_limit(util::LimitUnit::MessageRate, text) : std::nullopt;
    if (!bw && !mps)
      throw ArgError("qpo.rate('" + text + "'): not a bandwidth or a message rate with its unit (write e.g. 10Gb/s, "
                     "40MB/s with MB = 2^20 bytes as perftest, 0.5Mpps or 20000pps)");
    if ((bw && *bw <= 0) || (mps && *mps <= 0)) throw ArgError("qpo.rate('" + text + "'): a rate limit is above 0");
    lua_createtable(L, 0, 1);
    if (bw)
      set_number(L, "bytes", *bw * 1024.0 * 1024.0);  // parse_limit gives MB/s (2^20 bytes)
    else
      set_number(L, "messages", *mps * 1e6);          // and Mpps
    return 1;
  });
}

// qpo.status_name(5) -> "IBV_WC_WR_FLUSH_ERR"
int l_status_name(lua_State* L) {
  lua_pushstring(L, dp::wc_status_name(static_cast<int>(luaL_checkinteger(L, 1))));
  return 1;
}

// print(...) and qpo.log(...): one line of script output (WorkerCtx::script_line).
int l_print(lua_State* L) {
  int n = lua_gettop(L);
  // Every argument becomes a string on the stack first: luaL_tolstring may raise (a __tostring,
  // a full heap), which must happen before any C++ object exists in this frame.
  luaL_checkstack(L, n, "print");
  for (int i = 1; i <= n; ++i) luaL_tolstring(L, i, nullptr);
  return guarded(L, [&] {
    std::string line;
    for (int i = 1; i <= n; ++i) {
      size_t len = 0;
      const char* s = lua_tolstring(L, n + i, &len);
      if (i > 1) line += '\t';
      line.append(s, std::min(len, kMaxScriptLine + 1 - std::min(line.size(), kMaxScriptLine + 1)));
    }
    ctx(L).script_line(line);
    return 0;
  });
}

}  // namespace

void open_qpo(lua_State* L) {
  static const luaL_Reg fns[] = {
      {"now", l_now},       {"ticks", l_ticks},     {"ticks_per_second", l_ticks_per_second},
      {"sleep", l_sleep},   {"stats", l_stats},     {"together", l_together},
      {"size", l_size},     {"rate", l_rate},       {"status_name", l_status_name},
      {"log", l_print},     {nullptr, nullptr}};
  luaL_newlib(L, fns);
  lua_pushliteral(L, "0.1.0");
  lua_setfield(L, -2, "version");
  // qpo.op.write == 2 ...: integer op codes, cheaper than strings for a per-WR hook to return.
  lua_newtable(L);
  lua_newtable(L);  // qpo.ops: the names, in code order
  for (int i = 0; i <= static_cast<int>(dp::Op::Recv); ++i) {
    const char* name = dp::op_name(static_cast<dp::Op>(i));
    lua_pushinteger(L, i);
    lua_setfield(L, -3, name);
    lua_pushstring(L, name);
    lua_rawseti(L, -2, i + 1);
  }
  lua_setfield(L, -3, "ops");
  lua_setfield(L, -2, "op");
  // qpo.workload_defaults.bandwidth.size == 65536 ...: the one table of defaults
  // (util/workload_defaults.h), which qpo.perf's built-ins start from.
  lua_newtable(L);
  for (const auto& row : qpo::util::kWorkloadDefaults) {
    lua_newtable(L);
    lua_pushinteger(L, static_cast<lua_Integer>(row.size));
    lua_setfield(L, -2, "size");
    lua_pushinteger(L, static_cast<lua_Integer>(row.iterations));
    lua_setfield(L, -2, "iterations");
    lua_pushinteger(L, row.tx_depth);
    lua_setfield(L, -2, "tx_depth");
    lua_pushinteger(L, row.rx_depth);
    lua_setfield(L, -2, "rx_depth");
    lua_setfield(L, -2, row.name);
  }
  lua_setfield(L, -2, "workload_defaults");
  lua_setglobal(L, "qpo");
  lua_pushcfunction(L, l_print);
  lua_setglobal(L, "print");
}

void open_bindings(lua_State* L) {
  open_qpo(L);
  open_buffer(L);
  open_cq(L);
  open_qp(L);
  open_stream(L);
}

}  // namespace qpo::lua
