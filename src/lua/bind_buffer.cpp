// Buffer: a local MR's memory, for filling and checking data around the data path.
#include <cstring>

#include "dataplane/pattern.h"
#include "lua/bindings.h"
#include "lua/guard.h"

namespace qpo::lua {

namespace dp = qpo::dataplane;

namespace {

struct BufRef {
  const dp::LocalMr* mr;  // its fields are fixed; the bytes at mr->data are the buffer's
  const char* name;       // the endpoint's MR table's key: outlives every state
};

BufRef& buf(lua_State* L, const char* call) {
  auto* b = static_cast<BufRef*>(luaL_testudata(L, 1, kBufferType));
  if (!b) throw ArgError(std::string(call) + ": call it as buf:" + call + "(...)");
  return *b;
}

// Optional (offset, length) arguments at `first`, defaulting to the whole buffer, bounds-checked.
std::pair<uint64_t, uint64_t> range(lua_State* L, const BufRef& b, int first, const char* call) {
  uint64_t off = 0, len = 0;
  bool has_len = false;
  for (int k = 0; k < 2; ++k) {
    int i = first + k;
    if (lua_isnoneornil(L, i)) continue;
    int ok = 0;
    lua_Integer v = lua_tointegerx(L, i, &ok);
    if (!ok || v < 0) throw ArgError(std::string("buf:") + call + ": offset and length must be non-negative integers");
    (k == 0 ? off : len) = static_cast<uint64_t>(v);
    has_len |= k == 1;
  }
  if (off > b.mr->length) off = b.mr->length + 1;  // reported below
  if (!has_len) len = off <= b.mr->length ? b.mr->length - off : 0;
  if (off + len > b.mr->length)
    throw ArgError(std::string("buf:") + call + ": [" + std::to_string(off) + ", +" + std::to_string(len) +
                   ") is outside MR '" + b.name + "' (" + std::to_string(b.mr->length) + " bytes)");
  return {off, len};
}

uint64_t seed_arg(lua_State* L, const char* call) {
  int ok = 0;
  lua_Integer s = lua_tointegerx(L, 2, &ok);
  if (!ok) throw ArgError(std::string("buf:") + call + "(seed [, offset [, length]]): seed must be an integer");
  return static_cast<uint64_t>(s);
}

// The optional 4th argument: where in the pattern the range starts (default 0), so a chunk
// that moved from pattern offset X can be checked wherever it landed.
uint64_t from_arg(lua_State* L, const char* call) {
  if (lua_isnoneornil(L, 5)) return 0;
  int ok = 0;
  lua_Integer v = lua_tointegerx(L, 5, &ok);
  if (!ok || v < 0) throw ArgError(std::string("buf:") + call + ": the pattern offset must be a non-negative integer");
  return static_cast<uint64_t>(v);
}

// buf:fill(seed [, offset [, length [, from]]])
int l_fill(lua_State* L) {
  return guarded(L, [&] {
    BufRef& b = buf(L, "fill");
    uint64_t seed = seed_arg(L, "fill");
    auto [off, len] = range(L, b, 3, "fill");
    dp::fill_pattern(b.mr->data + off, len, seed, from_arg(L, "fill"));
    return 0;
  });
}

// buf:check(seed [, offset [, length [, from]]]) -> true | false, first bad offset (relative)
int l_check(lua_State* L) {
  return guarded(L, [&] {
    BufRef& b = buf(L, "check");
    uint64_t seed = seed_arg(L, "check");
    auto [off, len] = range(L, b, 3, "check");
    int64_t at = dp::check_pattern(b.mr->data + off, len, seed, from_arg(L, "check"));
    if (at < 0) {
      lua_pushboolean(L, 1);
      return 1;
    }
    lua_pushboolean(L, 0);
    lua_pushinteger(L, at);
    return 2;
  });
}

// buf:zero([offset [, length]])
int l_zero(lua_State* L) {
  return guarded(L, [&] {
    BufRef& b = buf(L, "zero");
    auto [off, len] = range(L, b, 2, "zero");
    std::memset(b.mr->data + off, 0, len);
    return 0;
  });
}

// buf:read(offset, length) -> string
int l_read(lua_State* L) {
  return guarded(L, [&] {
    BufRef& b = buf(L, "read");
    auto [off, len] = range(L, b, 2, "read");
    lua_pushlstring(L, reinterpret_cast<const char*>(b.mr->data + off), len);
    return 1;
  });
}

// buf:write(offset, string)
int l_write(lua_State* L) {
  return guarded(L, [&] {
    BufRef& b = buf(L, "write");
    if (lua_type(L, 3) != LUA_TSTRING) throw ArgError("buf:write(offset, data): data must be a string");
    size_t n = 0;
    const char* s = lua_tolstring(L, 3, &n);
    lua_pushinteger(L, static_cast<lua_Integer>(n));
    lua_replace(L, 3);
    auto [off, len] = range(L, b, 2, "write");
    std::memcpy(b.mr->data + off, s, len);
    return 0;
  });
}

// buf:u64(offset [, value]) -> value (native byte order, as atomics see it)
int l_u64(lua_State* L) {
  return guarded(L, [&] {
    BufRef& b = buf(L, "u64");
    lua_settop(L, 3);
    lua_pushinteger(L, 8);
    lua_insert(L, 3);  // (offset, 8, value)
    auto [off, len] = range(L, b, 2, "u64");
    uint64_t v = 0;
    if (!lua_isnil(L, 4)) {
      int ok = 0;
      v = static_cast<uint64_t>(lua_tointegerx(L, 4, &ok));
      if (!ok) throw ArgError("buf:u64(offset, value): value must be an integer");
      std::memcpy(b.mr->data + off, &v, 8);
    }
    std::memcpy(&v, b.mr->data + off, len);
    lua_pushinteger(L, static_cast<lua_Integer>(v));
    return 1;
  });
}

int buffer_index(lua_State* L) {
  auto* b = static_cast<BufRef*>(luaL_checkudata(L, 1, kBufferType));
  const char* key = lua_tostring(L, 2);
  if (!key) return 0;
  std::string_view k = key;
  if (k == "name") lua_pushstring(L, b->name);
  else if (k == "length") lua_pushinteger(L, static_cast<lua_Integer>(b->mr->length));
  else if (k == "addr") lua_pushinteger(L, static_cast<lua_Integer>(reinterpret_cast<uintptr_t>(b->mr->data)));
  else if (k == "lkey") lua_pushinteger(L, b->mr->mr ? b->mr->mr->lkey : 0);
  else if (k == "rkey") lua_pushinteger(L, b->mr->mr ? b->mr->mr->rkey : 0);
  else {
    lua_getfield(L, lua_upvalueindex(1), key);  // methods
  }
  return 1;
}

int buffer_tostring(lua_State* L) {
  auto* b = static_cast<BufRef*>(luaL_checkudata(L, 1, kBufferType));
  lua_pushfstring(L, "Buffer(%s, %d bytes)", b->name, static_cast<int>(b->mr->length));
  return 1;
}

}  // namespace

void open_buffer(lua_State* L) {
  static const luaL_Reg methods[] = {{"fill", l_fill}, {"check", l_check}, {"zero", l_zero}, {"read", l_read},
                                     {"write", l_write}, {"u64", l_u64}, {nullptr, nullptr}};
  luaL_newmetatable(L, kBufferType);
  luaL_newlib(L, methods);
  lua_pushcclosure(L, buffer_index, 1);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, buffer_tostring);
  lua_setfield(L, -2, "__tostring");
  lua_pop(L, 1);
}

void push_buffer(lua_State* L, const dp::LocalMr& mr, const std::string& name) {
  auto* b = static_cast<BufRef*>(lua_newuserdatauv(L, sizeof(BufRef), 0));
  *b = {&mr, name.c_str()};
  luaL_setmetatable(L, kBufferType);
}

const dp::LocalMr& check_buffer(lua_State* L, int index, const char* call) {
  auto* b = static_cast<BufRef*>(luaL_testudata(L, index, kBufferType));
  if (!b) throw ArgError(std::string(call) + ": expected a Buffer (qp:mr(name))");
  return *b->mr;
}

}  // namespace qpo::lua
