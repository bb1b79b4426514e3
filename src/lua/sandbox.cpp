#include "lua/sandbox.h"

#include <lua.hpp>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "lua/embedded.h"
#include "lua/guard.h"
#include "lua/runtime.h"
#include "lua/state.h"

namespace qpo::lua {

namespace {

constexpr const char* kPolicyKey = "qpo.policy";

const Policy& policy(lua_State* L) {
  lua_getfield(L, LUA_REGISTRYINDEX, kPolicyKey);
  const auto* p = static_cast<const Policy*>(lua_touserdata(L, -1));
  lua_pop(L, 1);
  return *p;
}

std::string real(const std::string& path) {
  char buf[PATH_MAX];
  return ::realpath(path.c_str(), buf) ? std::string(buf) : std::string();
}

// `path` made absolute against the script's directory, if it lies inside an allowed directory.
std::string allowed_path(const Policy& p, const std::string& path) {
  std::string candidate = path;
  if (!path.empty() && path[0] != '/' && !p.allowed_dirs.empty()) candidate = p.allowed_dirs[0] + "/" + path;
  std::string abs = real(candidate);
  if (abs.empty()) return "";
  for (const auto& dir : p.allowed_dirs) {
    std::string d = real(dir);
    if (!d.empty() && abs.rfind(d + "/", 0) == 0) return abs;
  }
  return "";
}

// Loads a text chunk; pushes the function. Throws on a syntax error (message from Lua).
void load_text(lua_State* L, const std::string& text, const std::string& chunkname) {
  if (luaL_loadbufferx(L, text.data(), text.size(), chunkname.c_str(), "t") != LUA_OK) {
    std::string msg = lua_tostring(L, -1);
    lua_pop(L, 1);
    throw ScriptError(msg);
  }
}

// loadfile(path [, mode [, env]]): text only, allowed directories only.
int sandboxed_loadfile(lua_State* L) {
  return guarded(L, [&] {
    if (lua_type(L, 1) != LUA_TSTRING) throw ArgError("loadfile: expected a path");
    std::string path = lua_tostring(L, 1);
    std::string abs = allowed_path(policy(L), path);
    if (abs.empty()) throw ArgError("loadfile('" + path + "'): outside the script's allowed directories (sandbox)");
    load_text(L, read_script_file(abs), "@" + abs);
    if (lua_gettop(L) >= 4 && !lua_isnil(L, 3)) {  // env argument: the chunk's first upvalue
      lua_pushvalue(L, 3);
      lua_setupvalue(L, -2, 1);
    }
    return 1;
  });
}

int sandboxed_dofile(lua_State* L) {
  int n = guarded(L, [&] {
    if (lua_type(L, 1) != LUA_TSTRING) throw ArgError("dofile: expected a path (reading stdin is not allowed)");
    std::string path = lua_tostring(L, 1);
    std::string abs = allowed_path(policy(L), path);
    if (abs.empty()) throw ArgError("dofile('" + path + "'): outside the script's allowed directories (sandbox)");
    lua_settop(L, 0);
    load_text(L, read_script_file(abs), "@" + abs);
    return 0;
  });
  (void)n;
  lua_call(L, 0, LUA_MULTRET);  // outside guarded(): errors propagate as Lua errors
  return lua_gettop(L);
}

// load(chunk [, chunkname [, mode [, env]]]) in text mode only: bytecode can break out of any
// sandbox.
int sandboxed_load(lua_State* L) {
  lua_settop(L, 4);
  if (lua_type(L, 3) == LUA_TSTRING && std::string(lua_tostring(L, 3)).find('b') != std::string::npos) {
    lua_pushnil(L);
    lua_pushliteral(L, "load: binary chunks are not allowed (sandbox)");
    return 2;
  }
  lua_pushliteral(L, "t");
  lua_replace(L, 3);
  lua_pushvalue(L, lua_upvalueindex(1));  // the original load
  lua_insert(L, 1);
  lua_call(L, 4, LUA_MULTRET);
  return lua_gettop(L);
}

// package.searchers entry: shipped modules (lua/qpo/perf.lua as "qpo.perf"), then the
// allowed directories.
int searcher(lua_State* L) {
  return guarded(L, [&] {
    std::string name = lua_type(L, 1) == LUA_TSTRING ? lua_tostring(L, 1) : "";
    std::string rel = name;
    for (auto& c : rel)
      if (c == '.') c = '/';
    rel += ".lua";
    if (auto text = rel.find("..") == std::string::npos ? shipped_script(rel) : std::nullopt) {
      load_text(L, *text, "@lua/" + rel);
      lua_pushstring(L, ("lua/" + rel).c_str());
      return 2;
    }
    const Policy& p = policy(L);
    for (const auto& dir : p.allowed_dirs) {
      std::string abs = allowed_path(p, dir + "/" + rel);
      if (abs.empty()) continue;
      load_text(L, read_script_file(abs), "@" + abs);
      lua_pushstring(L, abs.c_str());
      return 2;
    }
    lua_pushstring(L, ("no shipped module 'lua/" + rel + "' and no '" + rel + "' in the allowed directories").c_str());
    return 1;
  });
}

// io.write(...): script output like print's (WorkerCtx::script_write), never stdout.
int io_write(lua_State* L) {
  int n = lua_gettop(L);
  luaL_checkstack(L, n, "io.write");
  for (int i = 1; i <= n; ++i) luaL_tolstring(L, i, nullptr);  // may raise: before any C++ object
  return guarded(L, [&] {
    for (int i = 1; i <= n; ++i) {
      size_t len = 0;
      const char* s = lua_tolstring(L, n + i, &len);
      ctx(L).script_write(std::string_view(s, len));
    }
    return 0;
  });
}

void remove_fields(lua_State* L, const char* lib, std::initializer_list<const char*> names) {
  if (lua_getglobal(L, lib) == LUA_TTABLE)
    for (const char* n : names) {
      lua_pushnil(L);
      lua_setfield(L, -2, n);
    }
  lua_pop(L, 1);
}

}  // namespace

void install_sandbox(lua_State* L, const Policy& p) {
  lua_pushlightuserdata(L, const_cast<Policy*>(&p));
  lua_setfield(L, LUA_REGISTRYINDEX, kPolicyKey);

  // require: preload, then our searcher (shipped modules and allowed dirs); the standard Lua
  // and C searchers only when the user opted out of the sandbox.
  lua_getglobal(L, "package");
  lua_getfield(L, -1, "searchers");
  if (p.sandbox) {
    lua_rawgeti(L, -1, 1);  // the preload searcher
    lua_newtable(L);
    lua_insert(L, -2);
    lua_rawseti(L, -2, 1);
    lua_pushcfunction(L, searcher);
    lua_rawseti(L, -2, 2);
    lua_setfield(L, -3, "searchers");
    lua_pop(L, 1);
    lua_pushnil(L);
    lua_setfield(L, -2, "loadlib");
    lua_pushliteral(L, "");
    lua_setfield(L, -2, "cpath");
    lua_pushliteral(L, "");
    lua_setfield(L, -2, "path");
  } else {
    // Ours first, so `require "qpo.perf"` finds the shipped module either way.
    lua_Integer n = static_cast<lua_Integer>(lua_rawlen(L, -1));
    for (lua_Integer i = n; i >= 1; --i) {
      lua_rawgeti(L, -1, i);
      lua_rawseti(L, -2, i + 1);
    }
    lua_pushcfunction(L, searcher);
    lua_rawseti(L, -2, 1);
    lua_pop(L, 1);
  }
  lua_pop(L, 1);  // package
  if (!p.sandbox) return;

  // getenv too: a script's messages land in CI logs, and the environment holds CI's secrets.
  remove_fields(L, "os", {"execute", "exit", "remove", "rename", "tmpname", "setlocale", "getenv"});
  remove_fields(L, "string", {"dump"});

  lua_newtable(L);  // io: write only
  lua_pushcfunction(L, io_write);
  lua_setfield(L, -2, "write");
  lua_setglobal(L, "io");

  lua_newtable(L);  // debug: traceback only
  lua_getglobal(L, "debug");
  lua_getfield(L, -1, "traceback");
  lua_setfield(L, -3, "traceback");
  lua_pop(L, 1);
  lua_setglobal(L, "debug");

  lua_getglobal(L, "load");
  lua_pushcclosure(L, sandboxed_load, 1);
  lua_setglobal(L, "load");
  lua_pushcfunction(L, sandboxed_loadfile);
  lua_setglobal(L, "loadfile");
  lua_pushcfunction(L, sandboxed_dofile);
  lua_setglobal(L, "dofile");

  // The loaded-modules table still holds the full io/os/debug libraries: a script could reach
  // them with require "io". Point those entries at the trimmed globals.
  lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  for (const char* lib : {"io", "os", "debug", "string"}) {
    lua_getglobal(L, lib);
    lua_setfield(L, -2, lib);
  }
  lua_pop(L, 1);
}

std::string read_script_file(const std::string& path) {
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0) throw ScriptError("cannot read workload script '" + path + "': " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) throw ScriptError("workload script '" + path + "' is not a regular file");
  if (static_cast<std::size_t>(st.st_size) > kMaxScriptBytes)
    throw ScriptError("workload script '" + path + "' is " + std::to_string(st.st_size) + " bytes; scripts are limited to " +
                      std::to_string(kMaxScriptBytes) + " bytes");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ScriptError("cannot read workload script '" + path + "'");
  std::string text(static_cast<std::size_t>(st.st_size), '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  return text;
}

}  // namespace qpo::lua
