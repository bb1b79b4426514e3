#pragma once
// Stopping a worker thread that is busy in Lua code. A stream or a ping-pong sees the stop
// flag in its loop, but `while true do end` never calls into C++: the only way in is a Lua
// hook. A count hook set from the start would tax every instruction (the per-WR hook mode
// runs Lua per work request), so it is set only when needed, by the worker thread itself: a
// signal (SIGURG, ignored by default, as Go uses it to preempt) sent to that thread runs a
// handler that sets the hook on the thread's state, the way lua.c stops a script on Ctrl-C
// (lua_sethook may be called from a signal handler). From then on every Lua instruction of
// that state raises the reason, so a pcall in the script cannot swallow it.
#include <pthread.h>

#include <string>

struct lua_State;

namespace qpo::lua {

// While alive, interrupt() aimed at this thread makes `L` raise `*why` (e.g. "stopped: no
// answer within 5 s ...") at its next Lua instruction. `*why` must be set before interrupt()
// and stay alive. One scope per thread at a time.
class InterruptScope {
 public:
  InterruptScope(lua_State* L, const std::string* why);
  ~InterruptScope();
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;

 private:
  lua_State* L_;
};

// A coroutine is a Lua thread of its own, which the signal handler cannot reach: it gets a
// count hook that, every kCoroutinePollInstructions instructions, raises the scope's reason
// once an interrupt is pending. Scripts rarely run hot loops in coroutines; the per-WR hook
// path runs in the worker's main thread and pays nothing.
constexpr int kCoroutinePollInstructions = 1000;
void watch_coroutine(lua_State* co);

// Asks `thread` to raise its scope's reason; nothing happens when it has no scope open (then
// ask again later: it may be about to open one).
void interrupt(pthread_t thread);

}  // namespace qpo::lua
