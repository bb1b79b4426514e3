#pragma once
// One lua_State: standard libraries, the sandbox, the qpo bindings and prelude, and protected
// calls whose errors carry the script's file:line and a traceback. Internal to src/lua.
#include <functional>
#include <string>
#include <vector>

#include "lua/value.h"

struct lua_State;

namespace qpo::lua {

struct WorkerCtx;
struct Limits;

struct Policy {
  bool sandbox = true;
  std::vector<std::string> allowed_dirs;  // first = the script's own directory (relative paths)
  Limits* limits = nullptr;  // memory cap (and, once armed, deadline); must outlive the State
};

class State {
 public:
  State(WorkerCtx& w, const Policy& policy);
  ~State();
  State(const State&) = delete;
  State& operator=(const State&) = delete;
  lua_State* get() const { return L_; }

  // Compiles and runs `text` (text chunks only). Throws ScriptError.
  void run_chunk(const std::string& text, const std::string& chunkname);
  // Whether global `global` is a function; the lookup is protected too (throws ScriptError).
  bool has_function(const std::string& global) const;
  // Calls global `fn` with the arguments `push_args` pushes (it returns how many), all inside
  // a protected call: a lookup that runs a script's metamethod, or a push that meets a full
  // heap, fails the call instead of aborting. Returns fn's first result as a plain value.
  // Throws ScriptError (message with file:line, and the traceback), cut to a few KiB.
  Value call(const std::string& fn, const std::function<int(lua_State*)>& push_args);
  Value call(const std::string& fn, const Value& arg);

 private:
  lua_State* L_;
};

// Where a workload's script comes from: its text, the chunk name errors show
// ("@lua/write_bw.lua", "@/path/x.lua") and its directory ("" for shipped scripts).
struct ScriptSource {
  std::string text, chunkname, dir;
};
// Throws ScriptError when the script cannot be found or read.
ScriptSource resolve_script(const std::string& script, const std::string& source);

}  // namespace qpo::lua
