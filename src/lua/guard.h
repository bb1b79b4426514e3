#pragma once
// The boundary between Lua (which reports errors with longjmp) and C++ (exceptions and
// destructors). Every binding runs its body inside guarded(): the body reports problems by
// throwing, never by luaL_error/luaL_check* (a longjmp over C++ frames skips destructors);
// guarded() turns the exception into a Lua error prefixed with the calling script's
// file:line once the C++ frames are gone. Field reads use raw access, so a table with
// metamethods cannot raise from inside a body either.
#include <lua.hpp>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <stdexcept>
#include <string>

namespace qpo::lua {

// A mistake in how the script called a binding ("stream{}: unknown field 'sizee'").
struct ArgError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// An error raised by Lua code we called (a hook, a ready function): its message already
// carries the right file:line, so it is passed on unchanged.
struct ScriptError : std::runtime_error {
  ScriptError(const std::string& message, std::string tb = "") : std::runtime_error(message), traceback(std::move(tb)) {}
  std::string traceback;
};

// Pushes the exception's message (with the caller's position unless it is a ScriptError) and
// records data path errors in the worker context. Only called from guarded().
void push_exception(lua_State* L, const std::exception& e);

template <typename F>
int guarded(lua_State* L, F&& body) {
  int n = -1;
  try {
    n = body();
  } catch (const std::exception& e) {
    push_exception(L, e);
  }
  if (n >= 0) return n;
  return lua_error(L);  // no C++ object with a destructor is alive in this frame
}

// Reads fields of the table at `index`; errors name the call ("stream{size=...}").
class Fields {
 public:
  Fields(lua_State* L, int index, std::string call);
  bool has(const char* key) const;
  std::optional<int64_t> integer(const char* key) const;
  // Sizes also take strings with units: "64KiB", "4K", "1MiB", "2MB" (binary, like the scenario).
  std::optional<uint64_t> size(const char* key) const;
  std::optional<double> number(const char* key) const;
  std::optional<std::string> string(const char* key) const;
  std::optional<bool> boolean(const char* key) const;
  // Pushes the field (any type) and returns its Lua type; the caller pops it.
  int push(const char* key) const;
  // Throws for any key not in `known`, suggesting the closest known one.
  void only(std::initializer_list<const char*> known) const;
  const std::string& call() const { return call_; }
  lua_State* L() const { return L_; }

 private:
  lua_State* L_;
  int index_;
  std::string call_;
};

// Sizes in scripts mean what they mean in scenario files (util::parse_size: 64KiB = 65536,
// 64KB = 64000, 0x1000); a malformed one throws ArgError "WHAT: <the rule> (<a hint>)".
uint64_t parse_size(const std::string& text, const std::string& what);
const char* type_name(lua_State* L, int index);

}  // namespace qpo::lua
