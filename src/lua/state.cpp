#include "lua/state.h"

#include <lua.hpp>

#include <fstream>
#include <sstream>

#include "lua/bindings.h"
#include "lua/convert.h"
#include "lua/embedded.h"
#include "lua/guard.h"
#include "lua/limits.h"
#include "lua/runtime.h"
#include "lua/sandbox.h"

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

ScriptError split_error(const std::string& full) {
  auto at = full.find("\nstack traceback:");
  if (at == std::string::npos) return ScriptError(full);
  return ScriptError(full.substr(0, at), full.substr(at + 1));
}

}  // namespace

WorkerCtx& ctx(lua_State* L) { return **static_cast<WorkerCtx**>(lua_getextraspace(L)); }

State::State(WorkerCtx& w, const Policy& policy)
    : L_(policy.limits ? new_limited_state(*policy.limits) : luaL_newstate()) {
  if (!L_) throw ScriptError("cannot create a Lua state (out of memory)");
  *static_cast<WorkerCtx**>(lua_getextraspace(L_)) = &w;
  luaL_openlibs(L_);
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
    std::string msg = lua_tostring(L_, -1) ? lua_tostring(L_, -1) : "(error)";
    lua_settop(L_, handler - 1);
    throw split_error(msg);
  }
  lua_settop(L_, handler - 1);
}

bool State::has_function(const std::string& global) const {
  bool yes = lua_getglobal(L_, global.c_str()) == LUA_TFUNCTION;
  lua_pop(L_, 1);
  return yes;
}

Value State::call(const std::string& fn, int nargs) {
  int base = lua_gettop(L_) - nargs;
  // Stack: args... -> handler, fn, args...
  lua_rawgeti(L_, LUA_REGISTRYINDEX, ctx(L_).traceback_ref);
  lua_insert(L_, base + 1);
  lua_getglobal(L_, fn.c_str());
  lua_insert(L_, base + 2);
  int handler = base + 1;
  int rc = lua_pcall(L_, nargs, 1, handler);
  if (rc != LUA_OK) {
    std::string msg = lua_tostring(L_, -1) ? lua_tostring(L_, -1) : "(error)";
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
  s.text = read_script_file(script);
  s.chunkname = "@" + script;
  auto slash = script.rfind('/');
  s.dir = slash == std::string::npos ? "." : script.substr(0, slash);
  return s;
}

}  // namespace qpo::lua
