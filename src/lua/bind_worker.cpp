// The worker object `w` a role function receives.
#include <utility>

#include "lua/bindings.h"
#include "lua/convert.h"
#include "lua/guard.h"
#include "lua/runtime.h"

namespace qpo::lua {

namespace {

// w:barrier([tag]): waits for every worker of this workload that is still running (and, through
// the executor's callback, for the other hosts).
int l_barrier(lua_State* L) {
  return guarded(L, [&] {
    WorkerCtx& w = ctx(L);
    std::string tag = lua_type(L, 2) == LUA_TSTRING ? lua_tostring(L, 2) : "barrier";
    if (!w.shared) return 0;  // a lone state (check_workload): nothing to wait for
    Shared& s = *w.shared;
    std::function<void()> leader;
    if (s.cb && s.cb->barrier) leader = [&] { s.cb->barrier(tag); };
    // Generous: the other side may be posting a long stream's receives or a slow lab guest;
    // and counted from the workload's last progress: a long stream is late, not lost.
    auto progressed = [&s, seen = s.progress.load()]() mutable {
      uint64_t now = s.progress.load();
      return std::exchange(seen, now) != now;
    };
    s.barrier.arrive_and_wait(tag, leader, std::max(60000, w.timeout_ms * 6), progressed);
    return 0;
  });
}

// w:running() -> false once the executor asked to stop or another worker failed.
int l_running(lua_State* L) {
  lua_pushboolean(L, !ctx(L).stopping());
  return 1;
}

// w:log(fmt, ...): string.format, then one log line.
int l_log(lua_State* L) {
  int n = lua_gettop(L);
  lua_getglobal(L, "string");
  lua_getfield(L, -1, "format");
  lua_remove(L, -2);
  lua_insert(L, 2);
  lua_call(L, n - 1, 1);  // format errors are the script's: they propagate as Lua errors
  std::string line = lua_tostring(L, -1) ? lua_tostring(L, -1) : "";
  return guarded(L, [&] {
    ctx(L).log(line);
    return 0;
  });
}

// w:signal(name [, n = 1]) -> the counter's new value: tells the other workers something
// happened ("sent"), on every host of the workload (runtime.h).
int l_signal(lua_State* L) {
  return guarded(L, [&] {
    WorkerCtx& w = ctx(L);
    if (lua_type(L, 2) != LUA_TSTRING) throw ArgError("w:signal(name [, n]): name must be a string");
    lua_Integer n = lua_isnoneornil(L, 3) ? 1 : lua_tointeger(L, 3);
    if (!w.shared) throw ArgError("w:signal: only inside a running workload");
    lua_pushinteger(L, w.shared->add_signal(lua_tostring(L, 2), n));
    return 1;
  });
}

// w:signals(name) -> the counter's value (0 when never signaled).
int l_signals(lua_State* L) {
  return guarded(L, [&] {
    WorkerCtx& w = ctx(L);
    if (lua_type(L, 2) != LUA_TSTRING) throw ArgError("w:signals(name): name must be a string");
    lua_pushinteger(L, w.shared ? w.shared->signal(lua_tostring(L, 2)).load() : 0);
    return 1;
  });
}

}  // namespace

void push_worker(lua_State* L, WorkerCtx& w, const Value& args) {
  lua_createtable(L, 0, 12);
  lua_pushstring(L, w.name.c_str());
  lua_setfield(L, -2, "name");
  lua_pushstring(L, w.role.c_str());
  lua_setfield(L, -2, "role");
  lua_pushinteger(L, w.index);
  lua_setfield(L, -2, "index");
  lua_pushinteger(L, w.count);
  lua_setfield(L, -2, "count");
  push_value(L, args.is_table() ? args : Value::table());
  lua_setfield(L, -2, "args");
  lua_createtable(L, 0, static_cast<int>(w.qps.size()));
  bool first = true;
  for (const auto& name : w.qps) {
    dataplane::Endpoint* ep = w.endpoint(name);
    if (!ep) continue;  // run_workload reports unknown names before any state exists
    push_qp(L, *ep);
    if (first) {
      lua_pushvalue(L, -1);
      lua_setfield(L, -4, "qp");
      first = false;
    }
    lua_setfield(L, -2, name.c_str());
  }
  lua_setfield(L, -2, "qps");
  // w.workers: every worker of the workload (on every host), {name=, role=}, in spec order.
  if (w.shared && w.shared->spec) {
    const auto& spec = *w.shared->spec;
    const auto& all = spec.all_workers.empty() ? spec.workers : spec.all_workers;
    lua_createtable(L, static_cast<int>(all.size()), 0);
    for (size_t i = 0; i < all.size(); ++i) {
      lua_createtable(L, 0, 2);
      lua_pushstring(L, all[i].name.c_str());
      lua_setfield(L, -2, "name");
      lua_pushstring(L, all[i].role.c_str());
      lua_setfield(L, -2, "role");
      lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
    }
    lua_setfield(L, -2, "workers");
  }
  static const luaL_Reg methods[] = {
      {"barrier", l_barrier}, {"running", l_running}, {"log", l_log},
      {"signal", l_signal},   {"signals", l_signals}, {nullptr, nullptr}};
  luaL_setfuncs(L, methods, 0);
}

}  // namespace qpo::lua
