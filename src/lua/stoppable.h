#pragma once
// Script code that a hook cannot stop: the deadline of `qpo validate` and the run's interrupt
// (lua/limits.h, lua/interrupt.h) are count hooks, and Lua runs finalizers (__gc) with hooks
// off and a coroutine with hooks of its own. make_stoppable closes both ways, in every state
// (sandboxed or not: this is about being able to stop a run, not about what a script may reach):
//   setmetatable(t, {__gc = f})  raises "finalizers (__gc) are not available to scripts"
//   coroutine.create / wrap      the new coroutine polls for a pending interrupt
struct lua_State;

namespace qpo::lua {

void make_stoppable(lua_State* L);

}  // namespace qpo::lua
