#include "lua/guard.h"

#include <algorithm>
#include <vector>

#include "dataplane/error.h"
#include "dataplane/names.h"
#include "lua/runtime.h"
#include "util/units.h"

namespace qpo::lua {

void push_exception(lua_State* L, const std::exception& e) {
  if (const auto* se = dynamic_cast<const ScriptError*>(&e)) {
    lua_pushstring(L, se->what());
    return;
  }
  if (const auto* de = dynamic_cast<const dataplane::DataplaneError*>(&e)) {
    WorkerCtx& w = ctx(L);
    w.error_qp = de->qp();
    w.error_status = de->kind() == dataplane::DataplaneError::Kind::Completion ? dataplane::wc_status_name(de->wc_status()) : "";
  }
  luaL_where(L, 1);  // the Lua function that called the binding
  lua_pushstring(L, e.what());
  lua_concat(L, 2);
}

const char* type_name(lua_State* L, int index) { return lua_typename(L, lua_type(L, index)); }

uint64_t parse_size(const std::string& text, const std::string& what) {
  std::string why, hint;
  if (auto n = util::parse_size(text, &why, &hint)) return *n;
  throw ArgError(what + ": " + why + (hint.empty() ? "" : " (" + hint + ")"));
}

Fields::Fields(lua_State* L, int index, std::string call) : L_(L), index_(lua_absindex(L, index)), call_(std::move(call)) {
  if (lua_type(L, index_) != LUA_TTABLE)
    throw ArgError(call_ + ": expected a table argument, got " + type_name(L, index_));
}

int Fields::push(const char* key) const {
  lua_pushstring(L_, key);
  return lua_rawget(L_, index_);
}

bool Fields::has(const char* key) const {
  bool present = push(key) != LUA_TNIL;
  lua_pop(L_, 1);
  return present;
}

std::optional<int64_t> Fields::integer(const char* key) const {
  int t = push(key);
  std::optional<int64_t> out;
  if (t == LUA_TNUMBER) {
    int ok = 0;
    lua_Integer v = lua_tointegerx(L_, -1, &ok);
    if (ok) out = v;
  }
  bool bad = t != LUA_TNIL && !out;
  lua_pop(L_, 1);
  if (bad) throw ArgError(call_ + ": '" + key + "' must be an integer");
  return out;
}

std::optional<uint64_t> Fields::size(const char* key) const {
  int t = push(key);
  std::optional<uint64_t> out;
  std::string bad;
  if (t == LUA_TNUMBER) {
    int ok = 0;
    lua_Integer v = lua_tointegerx(L_, -1, &ok);
    if (ok && v >= 0) out = static_cast<uint64_t>(v);
    else bad = "must be a non-negative integer";
  } else if (t == LUA_TSTRING) {
    std::string text = lua_tostring(L_, -1);
    lua_pop(L_, 1);
    return parse_size(text, call_ + ": '" + key + "'");
  } else if (t != LUA_TNIL) {
    bad = std::string("must be a size, got ") + lua_typename(L_, t);
  }
  lua_pop(L_, 1);
  if (!bad.empty()) throw ArgError(call_ + ": '" + key + "' " + bad);
  return out;
}

std::optional<double> Fields::number(const char* key) const {
  int t = push(key);
  std::optional<double> out;
  if (t == LUA_TNUMBER) out = lua_tonumber(L_, -1);
  lua_pop(L_, 1);
  if (t != LUA_TNIL && !out) throw ArgError(call_ + ": '" + key + "' must be a number");
  return out;
}

std::optional<std::string> Fields::string(const char* key) const {
  int t = push(key);
  std::optional<std::string> out;
  if (t == LUA_TSTRING) out = lua_tostring(L_, -1);
  lua_pop(L_, 1);
  if (t != LUA_TNIL && !out) throw ArgError(call_ + ": '" + key + "' must be a string");
  return out;
}

std::optional<bool> Fields::boolean(const char* key) const {
  int t = push(key);
  std::optional<bool> out;
  if (t == LUA_TBOOLEAN) out = lua_toboolean(L_, -1) != 0;
  lua_pop(L_, 1);
  if (t != LUA_TNIL && !out) throw ArgError(call_ + ": '" + key + "' must be true or false");
  return out;
}

namespace {
size_t distance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}
}  // namespace

void Fields::only(std::initializer_list<const char*> known) const {
  std::string unknown;
  lua_pushnil(L_);
  while (lua_next(L_, index_) != 0) {
    lua_pop(L_, 1);  // value
    if (!unknown.empty()) continue;
    if (lua_type(L_, -1) != LUA_TSTRING) {
      if (lua_type(L_, -1) == LUA_TNUMBER) continue;  // list part (post lists, sge lists)
      unknown = std::string("(a ") + type_name(L_, -1) + " key)";
      continue;
    }
    std::string key = lua_tostring(L_, -1);
    bool ok = false;
    for (const char* k : known) ok |= key == k;
    if (!ok) unknown = key;
  }
  if (unknown.empty()) return;
  std::string best;
  size_t best_d = 3;
  for (const char* k : known)
    if (size_t d = distance(unknown, k); d < best_d) {
      best_d = d;
      best = k;
    }
  std::string names;
  for (const char* k : known) names += (names.empty() ? "" : " ") + std::string(k);
  throw ArgError(call_ + ": unknown field '" + unknown + "'" +
                 (best.empty() ? " (fields: " + names + ")" : " (did you mean '" + best + "'?)"));
}

}  // namespace qpo::lua
