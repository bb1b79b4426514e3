#include "lua/interrupt.h"

#include <lua.hpp>
#include <signal.h>

#include <atomic>
#include <cerrno>
#include <mutex>

namespace qpo::lua {

namespace {

// The state and the reason of this thread's open scope. Plain thread-locals of the
// executable: the signal handler may read them.
thread_local lua_State* t_state = nullptr;
thread_local const std::string* t_why = nullptr;
// Set by the signal handler for coroutines of this thread, which the handler cannot reach
// (it knows only the scope's main state): their poll hook reads it.
thread_local volatile sig_atomic_t t_pending = 0;

void raise_hook(lua_State* L, lua_Debug*) {
  // lua_error longjmps: no std::string may be alive here (see limits.cpp). A hook runs
  // without a frame of its own: level 0 is the script's function, whose file:line goes first.
  luaL_where(L, 0);
  lua_pushstring(L, t_why ? t_why->c_str() : "interrupted");
  lua_concat(L, 2);
  lua_error(L);
}

void on_signal(int) {
  int saved = errno;
  if (lua_State* L = t_state) {
    t_pending = 1;
    lua_sethook(L, raise_hook, LUA_MASKCOUNT, 1);
  }
  errno = saved;
}

void poll_hook(lua_State* L, lua_Debug* ar) {
  if (t_pending) raise_hook(L, ar);
}

void install_handler() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;  // a read() or write() in the data path just goes on
    sigemptyset(&sa.sa_mask);
    sigaction(SIGURG, &sa, nullptr);
  });
}

}  // namespace

InterruptScope::InterruptScope(lua_State* L, const std::string* why) : L_(L) {
  install_handler();
  t_why = why;
  std::atomic_signal_fence(std::memory_order_seq_cst);  // the handler sees t_why set first
  t_state = L;
}

InterruptScope::~InterruptScope() {
  t_state = nullptr;
  t_pending = 0;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  lua_sethook(L_, nullptr, 0, 0);  // the state may still run __gc code when it closes
}

void watch_coroutine(lua_State* co) {
  // A coroutine created while its creator had a hook (a validate deadline, an interrupt
  // already raised) inherited it: keep that one.
  if (!lua_gethook(co)) lua_sethook(co, poll_hook, LUA_MASKCOUNT, kCoroutinePollInstructions);
}

void interrupt(pthread_t thread) {
  install_handler();
  pthread_kill(thread, SIGURG);
}

}  // namespace qpo::lua
