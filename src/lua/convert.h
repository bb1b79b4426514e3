#pragma once
// Plain values <-> the Lua stack.
#include <lua.hpp>

#include <string>

#include "lua/value.h"

namespace qpo::lua {

void push_value(lua_State* L, const Value& v);
// Throws ArgError for functions, userdata, threads, cycles/too deep, and keys that are neither
// strings nor a sequence's integers; `path` names the place ("result.latency[3]").
Value to_value(lua_State* L, int index, const std::string& path);

}  // namespace qpo::lua
