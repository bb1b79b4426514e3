#include "lua/stoppable.h"

#include <lua.hpp>

#include "lua/interrupt.h"

namespace qpo::lua {

namespace {

// Plain Lua API code, no C++ objects: errors here are ordinary Lua errors.
int no_finalizer_setmetatable(lua_State* L) {
  if (lua_type(L, 2) == LUA_TTABLE) {
    lua_pushliteral(L, "__gc");
    bool has_gc = lua_rawget(L, 2) != LUA_TNIL;  // raw: the metatable's own metatable runs nothing
    lua_pop(L, 1);
    if (has_gc)
      return luaL_error(L, "setmetatable: finalizers (__gc) are not available to scripts: Lua runs them where "
                           "qpo's time limit and Ctrl-C cannot stop them");
  }
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, 1);
  return 1;
}

int watched_create(lua_State* L) {
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, 1);
  if (lua_State* co = lua_tothread(L, -1)) watch_coroutine(co);
  return 1;
}

int watched_wrap(lua_State* L) {
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, 1);
  // The wrapper is a C closure over its coroutine (lcorolib's auxwrap: upvalue 1).
  if (lua_getupvalue(L, -1, 1)) {
    if (lua_State* co = lua_tothread(L, -1)) watch_coroutine(co);
    lua_pop(L, 1);
  }
  return 1;
}

void replace(lua_State* L, const char* lib, const char* name, lua_CFunction fn) {
  if (lib) {
    if (lua_getglobal(L, lib) != LUA_TTABLE) {
      lua_pop(L, 1);
      return;
    }
  } else {
    lua_pushglobaltable(L);
  }
  lua_getfield(L, -1, name);
  lua_pushcclosure(L, fn, 1);
  lua_setfield(L, -2, name);
  lua_pop(L, 1);
}

}  // namespace

void make_stoppable(lua_State* L) {
  replace(L, nullptr, "setmetatable", no_finalizer_setmetatable);
  replace(L, "coroutine", "create", watched_create);
  replace(L, "coroutine", "wrap", watched_wrap);
}

}  // namespace qpo::lua
