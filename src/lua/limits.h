#pragma once
// Bounds for running untrusted script code where nothing else bounds it: `qpo validate`
// runs a script's top level and setup(args) (lua::check_workload) with no device, no run
// timeout and no Ctrl-C habit behind it, so a `while true do end` would hang it forever and
// a `string.rep` loop would eat the machine. Run-time states are not limited: a workload's
// own timeout, thresholds and SIGINT bound those.
#include <chrono>
#include <cstddef>
#include <string>

struct lua_State;

namespace qpo::lua {

struct Limits {
  std::chrono::milliseconds time{2000};
  size_t bytes = size_t{64} << 20;
  std::string phase = "the script";  // who is running, for the message: "setup()", ...

  // Filled in while the state runs.
  std::chrono::steady_clock::time_point deadline{};
  size_t used = 0;
  bool out_of_memory = false, out_of_time = false;

  // The message for an error raised while a limit was hit, or "" when none was.
  std::string exceeded() const;
};

// A state whose allocations count against `l.bytes` (`l` must outlive it), or nullptr.
lua_State* new_limited_state(Limits& l);
// Starts the clock: from now on, running longer than `l.time` raises an error in the script.
void arm_deadline(lua_State* L, Limits& l);

}  // namespace qpo::lua
