#include "lua/convert.h"

#include <map>

#include "lua/guard.h"

namespace qpo::lua {

namespace {
constexpr int kMaxDepth = 32;
// A value that leaves a state is copied into C++ memory, outside the Lua heap's limit: a table
// that appears twice is copied twice, so thirty levels of `t = {t, t}` (a few hundred bytes of
// Lua) would be 2^30 nodes. The copy counts what it makes.
constexpr size_t kMaxNodes = size_t{1} << 22, kMaxBytes = size_t{256} << 20;

struct Budget {
  size_t nodes = 0, bytes = 0;
  void take(size_t n_bytes, const std::string& path) {
    bytes += n_bytes + sizeof(Value);
    if (++nodes > kMaxNodes || bytes > kMaxBytes)
      throw ArgError(path + ": the value is too large to leave the Lua state (more than " + std::to_string(kMaxNodes) +
                     " values or " + std::to_string(kMaxBytes >> 20) +
                     " MiB; a table that appears several times is copied each time)");
  }
};

Value convert(lua_State* L, int index, const std::string& path, int depth, Budget& budget) {
  index = lua_absindex(L, index);
  size_t string_bytes = 0;
  if (lua_type(L, index) == LUA_TSTRING) lua_tolstring(L, index, &string_bytes);
  budget.take(string_bytes, path);
  switch (lua_type(L, index)) {
    case LUA_TNIL: return {};
    case LUA_TBOOLEAN: return Value(lua_toboolean(L, index) != 0);
    case LUA_TNUMBER:
      if (lua_isinteger(L, index)) return Value(static_cast<int64_t>(lua_tointeger(L, index)));
      return Value(static_cast<double>(lua_tonumber(L, index)));
    case LUA_TSTRING: {
      size_t n = 0;
      const char* s = lua_tolstring(L, index, &n);
      return Value(std::string(s, n));
    }
    case LUA_TTABLE: break;
    default:
      throw ArgError("only plain values (nil, boolean, number, string, table) leave a Lua state; " + path + " is a " +
                     type_name(L, index));
  }
  if (depth >= kMaxDepth) throw ArgError(path + ": tables nested deeper than " + std::to_string(kMaxDepth) + " (a cycle?)");
  if (!lua_checkstack(L, 4)) throw ArgError(path + ": Lua stack exhausted");
  Value t = Value::table();
  // Sequence part first (1..n without holes), then string keys; anything else is refused.
  lua_Integer n = static_cast<lua_Integer>(lua_rawlen(L, index));
  for (lua_Integer i = 1; i <= n; ++i) {
    lua_rawgeti(L, index, i);
    t.push_back(convert(L, -1, path + "[" + std::to_string(i) + "]", depth + 1, budget));
    lua_pop(L, 1);
  }
  lua_pushnil(L);
  while (lua_next(L, index) != 0) {
    if (lua_type(L, -2) == LUA_TSTRING) {
      std::string key = lua_tostring(L, -2);
      t[key] = convert(L, -1, path + "." + key, depth + 1, budget);
    } else if (lua_isinteger(L, -2) && lua_tointeger(L, -2) >= 1 && lua_tointeger(L, -2) <= n) {
      // already taken as part of the sequence
    } else {
      std::string what = lua_isinteger(L, -2) ? "sparse integer" : type_name(L, -2);
      lua_pop(L, 2);
      throw ArgError(path + ": table keys must be strings or a sequence 1..n (found a " + what + " key)");
    }
    lua_pop(L, 1);
  }
  return t;
}
}  // namespace

Value to_value(lua_State* L, int index, const std::string& path) {
  Budget budget;
  return convert(L, index, path, 0, budget);
}

void push_value(lua_State* L, const Value& v) {
  switch (v.kind()) {
    case Value::Kind::Nil: lua_pushnil(L); break;
    case Value::Kind::Bool: lua_pushboolean(L, v.as_bool()); break;
    case Value::Kind::Int: lua_pushinteger(L, v.as_int()); break;
    case Value::Kind::Number: lua_pushnumber(L, v.as_number()); break;
    case Value::Kind::String: lua_pushlstring(L, v.as_string().data(), v.as_string().size()); break;
    case Value::Kind::Table: {
      luaL_checkstack(L, 3, "push_value");
      lua_createtable(L, static_cast<int>(v.array().size()), static_cast<int>(v.fields().size()));
      for (size_t i = 0; i < v.array().size(); ++i) {
        push_value(L, v.array()[i]);
        lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
      }
      for (const auto& [k, f] : v.fields()) {
        push_value(L, f);
        lua_setfield(L, -2, k.c_str());
      }
      break;
    }
  }
}

}  // namespace qpo::lua
