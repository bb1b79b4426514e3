#pragma once
// The qpo Lua API, one file per object (bind_*.cpp). docs/lua.md documents every function.
//   qpo.*       timers, statistics, names, sizes                        bind_qpo.cpp
//   w           the worker: w.qp, w.args, w:barrier(), w:running()     bind_worker.cpp
//   Qp          qp:post_send/post_recv/mr/remote/state                  bind_qp.cpp
//               qp:stream{...}, qp:pingpong{...}                        bind_stream.cpp
//   Cq          cq:poll/wait/notify/wait_event                          bind_cq.cpp
//   Buffer      buf:fill/check/read/write/u64                           bind_buffer.cpp
#include <lua.hpp>

#include <string>

#include "dataplane/endpoint.h"
#include "lua/value.h"

namespace qpo::lua {

struct WorkerCtx;

// Registers the qpo table, print, and the metatables of every object type.
void open_bindings(lua_State* L);

void open_qpo(lua_State* L);
void open_qp(lua_State* L);
void open_stream(lua_State* L);  // adds stream/pingpong to the Qp methods
void open_cq(lua_State* L);
void open_buffer(lua_State* L);

// Pushes the worker object `w` for the state's WorkerCtx, with w.args = args.
void push_worker(lua_State* L, WorkerCtx& w, const Value& args);
void push_qp(lua_State* L, dataplane::Endpoint& ep);
void push_cq(lua_State* L, ibv_cq* cq, ibv_comp_channel* channel, const std::string& qp);
void push_buffer(lua_State* L, const dataplane::LocalMr& mr, const std::string& name);

// The Qp a userdata at `index` refers to; throws ArgError naming `call` otherwise.
dataplane::Endpoint& check_qp(lua_State* L, int index, const char* call);
const dataplane::LocalMr& check_buffer(lua_State* L, int index, const char* call);
// Adds functions to the Qp methods (bind_stream.cpp adds stream and pingpong).
void add_qp_methods(lua_State* L, const luaL_Reg* fns);

inline constexpr const char* kQpType = "qpo.Qp";
inline constexpr const char* kCqType = "qpo.Cq";
inline constexpr const char* kBufferType = "qpo.Buffer";

}  // namespace qpo::lua
