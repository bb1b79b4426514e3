#include "lua/limits.h"

#include <lua.hpp>

#include <cstdio>
#include <cstdlib>

namespace qpo::lua {

namespace {

void* limited_alloc(void* ud, void* ptr, size_t old_size, size_t new_size) {
  auto& l = *static_cast<Limits*>(ud);
  if (!ptr) old_size = 0;  // then old_size is a type tag, not a size
  if (new_size == 0) {
    l.used -= old_size;
    std::free(ptr);
    return nullptr;
  }
  if (new_size > old_size && l.used - old_size + new_size > l.bytes) {
    l.out_of_memory = true;
    return nullptr;  // Lua raises "not enough memory"
  }
  void* p = std::realloc(ptr, new_size);
  if (p) l.used = l.used - old_size + new_size;
  return p;
}

Limits& limits_of(lua_State* L) {
  void* ud = nullptr;
  lua_getallocf(L, &ud);
  return *static_cast<Limits*>(ud);
}

void count_hook(lua_State* L, lua_Debug*) {
  auto& l = limits_of(L);
  if (std::chrono::steady_clock::now() < l.deadline) return;
  l.out_of_time = true;
  // From now on every instruction errors, so a script that catches the error with pcall
  // cannot keep looping: the first instruction outside the pcall raises it again.
  lua_sethook(L, count_hook, LUA_MASKCOUNT, 1);
  // luaL_error longjmps (lua/guard.h): no std::string may be alive when it does, or its
  // memory leaks (LeakSanitizer in hostile_tests and lua_tests). The message goes through a
  // plain buffer; the temporary string dies at the end of the snprintf statement.
  char message[256];
  std::snprintf(message, sizeof message, "%s", l.exceeded().c_str());
  luaL_error(L, "%s", message);
}

}  // namespace

std::string Limits::exceeded() const {
  if (out_of_time)
    return phase + " did not finish within " + std::to_string(time.count() / 1000) + " s";
  if (out_of_memory) return phase + " used more than " + std::to_string(bytes >> 20) + " MiB";
  return "";
}

lua_State* new_limited_state(Limits& l) { return lua_newstate(limited_alloc, &l); }

void arm_deadline(lua_State* L, Limits& l) {
  l.deadline = std::chrono::steady_clock::now() + l.time;
  lua_sethook(L, count_hook, LUA_MASKCOUNT, 10000);  // a clock read every 10k instructions
}

}  // namespace qpo::lua
