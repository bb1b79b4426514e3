#include "lua/state.h"

#include <lua.hpp>

#include <fstream>
#include <functional>
#include <sstream>

#include "lua/bindings.h"
#include "lua/convert.h"
#include "lua/embedded.h"
#include "lua/guard.h"
#include "lua/limits.h"
#include "lua/runtime.h"
#include "lua/sandbox.h"
#include "lua/stoppable.h"

namespace qpo::lua {

namespace {

// Message handler for every protected call: the message plus a traceback, so a failure deep
// in a helper still shows which line of the role function led there.
int traceback(lua_State* L) {
  const char* msg = lua_tostring(L, 1);
  if (!msg) {
    if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING) return 1;
    msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
  }
  luaL_traceback(L, L, msg, 1);
  return 1;
}

// A script's error() text can be megabytes: messages and tracebacks are cut (and the cut
// counted) before they reach a log, a report or a terminal.
constexpr size_t kMaxMessage = 4096, kMaxTraceback = 8192;

std::string cut(const std::string& text, size_t max) {
  if (text.size() <= max) return text;
  return text.substr(0, max) + "... [" + std::to_string(text.size() - max) + " more bytes]";
}

ScriptError split_error(const std::string& full) {
  auto at = full.find("\nstack traceback:");
  if (at == std::string::npos) return ScriptError(cut(full, kMaxMessage));
  return ScriptError(cut(full.substr(0, at), kMaxMessage), cut(full.substr(at + 1), kMaxTraceback));
}

// The error object of a failed protected call, as text, without raising: lua_tostring would
// convert a number in place (an allocation that can fail on a full heap).
std::string error_text(lua_State* L) {
  if (lua_type(L, -1) != LUA_TSTRING) return "(error object is a " + std::string(luaL_typename(L, -1)) + " value)";
  size_t n = 0;
  const char* s = lua_tolstring(L, -1, &n);
  return std::string(s, n);
}

// What every Lua API call that can raise (a global lookup meets a script's __index, a push
// meets a full heap) runs inside: lua_pcall of one of these, never a bare call.
struct CallRequest {
  const char* fn;
  const std::function<int(lua_State*)>* push_args;
};

// global_type(name): the type of global `name` (its lookup may run a script's metamethods).
int global_type(lua_State* L) {
  const char* name = static_cast<const char*>(lua_touserdata(L, 1));
  lua_pushinteger(L, lua_getglobal(L, name));
  return 1;
}

// call_global(request): pushes the request's args and calls its global function. Frames of
// push_args may be left by a Lua error (a full heap): they hold no C++ object that owns memory.
int call_global(lua_State* L) {
  const auto* rq = static_cast<const CallRequest*>(lua_touserdata(L, 1));
  lua_settop(L, 0);
  if (lua_getglobal(L, rq->fn) != LUA_TFUNCTION) return luaL_error(L, "%s is not a function", rq->fn);
  int nargs = rq->push_args ? (*rq->push_args)(L) : 0;
  lua_call(L, nargs, 1);
  return 1;
}

// Only reached by a Lua error outside any protected call, which the calls above leave no room
// for (state creation on a full heap at most). Lua would abort() after this returns: turn it
// into a C++ exception instead, so the run reports a failure and goes on tearing down. Lua's C
// frames between here and the caller have unwind tables (Debian builds with them) and own
// nothing that needs cleaning up.
int panic(lua_State* L) {
  std::string msg = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "(no message)";
  throw ScriptError("Lua panic (an error outside a protected call): " + cut(msg, kMaxMessage));
}

}  // namespace

WorkerCtx& ctx(lua_State* L) { return **static_cast<WorkerCtx**>(lua_getextraspace(L)); }

State::State(WorkerCtx& w, const Policy& policy)
    : L_(policy.limits ? new_limited_state(*policy.limits) : luaL_newstate()) {
  if (!L_) throw ScriptError("cannot create a Lua state (out of memory)");
  lua_atpanic(L_, panic);
  *static_cast<WorkerCtx**>(lua_getextraspace(L_)) = &w;
  luaL_openlibs(L_);
  make_stoppable(L_);
  lua_pushcfunction(L_, traceback);
  w.traceback_ref = luaL_ref(L_, LUA_REGISTRYINDEX);
  install_sandbox(L_, policy);
  open_bindings(L_);
  auto prelude = shipped_script("qpo/prelude.lua");
  if (prelude) run_chunk(*prelude, "@lua/qpo/prelude.lua");
}

State::~State() { lua_close(L_); }

void State::run_chunk(const std::string& text, const std::string& chunkname) {
  lua_rawgeti(L_, LUA_REGISTRYINDEX, ctx(L_).traceback_ref);
  int handler = lua_gettop(L_);
  int rc = luaL_loadbufferx(L_, text.data(), text.size(), chunkname.c_str(), "t");
  if (rc == LUA_OK) rc = lua_pcall(L_, 0, 0, handler);
  if (rc != LUA_OK) {
    std::string msg = error_text(L_);
    lua_settop(L_, handler - 1);
    throw split_error(msg);
  }
  lua_settop(L_, handler - 1);
}

bool State::has_function(const std::string& global) const {
  int base = lua_gettop(L_);
  if (!lua_checkstack(L_, 4)) throw ScriptError("looking up " + global + "(): Lua stack exhausted");
  lua_rawgeti(L_, LUA_REGISTRYINDEX, ctx(L_).traceback_ref);
  lua_pushcfunction(L_, global_type);
  lua_pushlightuserdata(L_, const_cast<char*>(global.c_str()));
  int rc = lua_pcall(L_, 1, 1, base + 1);
  if (rc != LUA_OK) {
    std::string msg = error_text(L_);
    lua_settop(L_, base);
    ScriptError e = split_error(msg);
    throw ScriptError("looking up " + global + "(): " + e.what(), e.traceback);
  }
  bool yes = lua_tointeger(L_, -1) == LUA_TFUNCTION;
  lua_settop(L_, base);
  return yes;
}

Value State::call(const std::string& fn, const std::function<int(lua_State*)>& push_args) {
  int base = lua_gettop(L_);
  if (!lua_checkstack(L_, 4)) throw ScriptError(fn + "(): Lua stack exhausted");
  CallRequest rq{fn.c_str(), push_args ? &push_args : nullptr};
  lua_rawgeti(L_, LUA_REGISTRYINDEX, ctx(L_).traceback_ref);
  lua_pushcfunction(L_, call_global);
  lua_pushlightuserdata(L_, &rq);
  int rc = lua_pcall(L_, 1, 1, base + 1);
  if (rc != LUA_OK) {
    std::string msg = error_text(L_);
    lua_settop(L_, base);
    throw split_error(msg);
  }
  Value out;
  try {
    out = to_value(L_, -1, fn + "() result");
  } catch (const ArgError& e) {
    lua_settop(L_, base);
    throw ScriptError(e.what());
  }
  lua_settop(L_, base);
  return out;
}

Value State::call(const std::string& fn, const Value& arg) {
  return call(fn, [&arg](lua_State* L) {
    push_value(L, arg);
    return 1;
  });
}

ScriptSource resolve_script(const std::string& script, const std::string& source) {
  ScriptSource s;
  if (!source.empty()) {
    s.text = source;
    s.chunkname = "@" + (script.empty() ? std::string("(inline)") : script);
    return s;
  }
  const std::string prefix = "builtin:";
  if (script.rfind(prefix, 0) == 0) {
    std::string name = script.substr(prefix.size());
    auto text = name.find("..") == std::string::npos ? shipped_script(name + ".lua") : std::nullopt;
    if (!text) {
      std::string names;
      for (const auto& n : builtin_names()) names += (names.empty() ? "" : ", ") + n;
      throw ScriptError("no built-in workload '" + name + "' (built-ins: " + names + ")");
    }
    s.text = *text;
    s.chunkname = "@lua/" + name + ".lua";
    return s;
  }
  // Only .lua files: a syntax error quotes the text near it, so `script: /etc/shadow` would
  // print a piece of any file qpo can read.
  if (script.size() < 5 || script.compare(script.size() - 4, 4, ".lua") != 0)
    throw ScriptError("workload script '" + script + "': not a .lua file (a script file's name ends in .lua)");
  s.text = read_script_file(script);
  s.chunkname = "@" + script;
  auto slash = script.rfind('/');
  s.dir = slash == std::string::npos ? "." : script.substr(0, slash);
  return s;
}

}  // namespace qpo::lua
