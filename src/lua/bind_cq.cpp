// Cq: polling and completion events by hand (the per-WR API; streams poll in C++).
#include <arpa/inet.h>

#include <chrono>
#include <thread>

#include "dataplane/cq_router.h"
#include "dataplane/error.h"
#include "dataplane/names.h"
#include "dataplane/wait.h"
#include "lua/bindings.h"
#include "lua/guard.h"
#include "lua/runtime.h"

namespace qpo::lua {

namespace dp = qpo::dataplane;

namespace {

constexpr int kMaxPoll = 256;

struct CqRef {
  ibv_cq* cq;
  ibv_comp_channel* channel;
  const char* qp;  // the QP it was reached from (messages)
};

CqRef& cq_arg(lua_State* L, const char* call) {
  auto* c = static_cast<CqRef*>(luaL_testudata(L, 1, kCqType));
  if (!c) throw ArgError(std::string(call) + ": call it as cq:" + call + "(...)");
  return *c;
}

const std::string* qp_name_of(WorkerCtx& w, uint32_t qp_num) {
  if (!w.shared || !w.shared->endpoints) return nullptr;
  for (const auto& [name, ep] : *w.shared->endpoints)
    if (ep.qp && ep.qp->qp_num == qp_num) return &name;
  return nullptr;
}

void push_completion(lua_State* L, WorkerCtx& w, const ibv_wc& wc) {
  lua_createtable(L, 0, 9);
  lua_pushinteger(L, static_cast<lua_Integer>(wc.wr_id));
  lua_setfield(L, -2, "id");
  lua_pushstring(L, dp::wc_status_name(wc.status));
  lua_setfield(L, -2, "status");
  lua_pushboolean(L, wc.status == IBV_WC_SUCCESS);
  lua_setfield(L, -2, "ok");
  if (wc.status == IBV_WC_SUCCESS) {  // the opcode of an error completion is undefined
    lua_pushstring(L, dp::wc_opcode_name(wc.opcode));
    lua_setfield(L, -2, "opcode");
  }
  lua_pushinteger(L, wc.byte_len);
  lua_setfield(L, -2, "byte_len");
  lua_pushinteger(L, wc.qp_num);
  lua_setfield(L, -2, "qp_num");
  if (const std::string* n = qp_name_of(w, wc.qp_num)) {
    lua_pushstring(L, n->c_str());
    lua_setfield(L, -2, "qp");
  }
  if (wc.wc_flags & IBV_WC_WITH_IMM) {
    lua_pushinteger(L, ntohl(wc.imm_data));
    lua_setfield(L, -2, "imm");
  }
  if (wc.src_qp) {
    lua_pushinteger(L, wc.src_qp);
    lua_setfield(L, -2, "src_qp");
  }
  lua_pushinteger(L, wc.vendor_err);
  lua_setfield(L, -2, "vendor_err");
}

int max_arg(lua_State* L, int index, int dflt, const char* call) {
  if (lua_isnoneornil(L, index)) return dflt;
  int ok = 0;
  lua_Integer n = lua_tointegerx(L, index, &ok);
  if (!ok || n < 1 || n > kMaxPoll)
    throw ArgError(std::string("cq:") + call + ": n must be an integer between 1 and " + std::to_string(kMaxPoll));
  return static_cast<int>(n);
}

int push_list(lua_State* L, WorkerCtx& w, const ibv_wc* wc, int n) {
  lua_createtable(L, n, 0);
  for (int i = 0; i < n; ++i) {
    push_completion(L, w, wc[i]);
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

// cq:poll([n = 16]) -> list of completions (possibly empty); never blocks.
int l_poll(lua_State* L) {
  return guarded(L, [&] {
    CqRef& c = cq_arg(L, "poll");
    int n = max_arg(L, 2, 16, "poll");
    WorkerCtx& w = ctx(L);
    ibv_wc wc[kMaxPoll];
    int got = dp::CqHandle(c.cq, w.access).poll(n, wc);
    if (got < 0) throw std::runtime_error(std::string("ibv_poll_cq on the CQ of QP '") + c.qp + "' failed");
    return push_list(L, w, wc, got);
  });
}

// cq:wait([n = 1 [, timeout_s = the workload timeout]]) -> list with >= 1 completion, or an
// empty list on timeout or stop. Spins (with yields) like the data path does.
int l_wait(lua_State* L) {
  return guarded(L, [&] {
    CqRef& c = cq_arg(L, "wait");
    int n = max_arg(L, 2, 1, "wait");
    WorkerCtx& w = ctx(L);
    double timeout = lua_isnoneornil(L, 3) ? w.timeout_ms / 1000.0 : lua_tonumber(L, 3);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout);
    dp::CqHandle h(c.cq, w.access);
    ibv_wc wc[kMaxPoll];
    int got = 0;
    for (uint32_t spins = 0;; ++spins) {
      got = h.poll(n, wc);
      if (got != 0) break;
      if ((spins & 255) == 255) {
        if (std::chrono::steady_clock::now() > deadline || w.stopping()) break;
        std::this_thread::yield();
      }
    }
    if (got < 0) throw std::runtime_error(std::string("ibv_poll_cq on the CQ of QP '") + c.qp + "' failed");
    return push_list(L, w, wc, got);
  });
}

// cq:notify([solicited_only = false]): arm the CQ for one completion event.
int l_notify(lua_State* L) {
  return guarded(L, [&] {
    CqRef& c = cq_arg(L, "notify");
    if (!c.channel) throw ArgError(std::string("cq:notify: the CQ of QP '") + c.qp + "' has no completion channel");
    if (int e = ibv_req_notify_cq(c.cq, lua_toboolean(L, 2)))
      dp::post_error(c.qp, "ibv_req_notify_cq", e, "");
    return 0;
  });
}

// cq:wait_event([timeout_s]) -> true when an event arrived (and was acked), false on timeout.
int l_wait_event(lua_State* L) {
  return guarded(L, [&] {
    CqRef& c = cq_arg(L, "wait_event");
    if (!c.channel) throw ArgError(std::string("cq:wait_event: the CQ of QP '") + c.qp + "' has no completion channel");
    WorkerCtx& w = ctx(L);
    double timeout = lua_isnoneornil(L, 2) ? w.timeout_ms / 1000.0 : lua_tonumber(L, 2);
    dp::EventCq e{c.cq, c.channel};
    lua_pushboolean(L, dp::block_on_channels(std::span<const dp::EventCq>(&e, 1), static_cast<int>(timeout * 1000)));
    return 1;
  });
}

int cq_index(lua_State* L) {
  auto* c = static_cast<CqRef*>(luaL_checkudata(L, 1, kCqType));
  const char* key = lua_tostring(L, 2);
  if (!key) return 0;
  std::string_view k = key;
  if (k == "depth") lua_pushinteger(L, c->cq->cqe);
  else if (k == "has_channel") lua_pushboolean(L, c->channel != nullptr);
  else lua_getfield(L, lua_upvalueindex(1), key);
  return 1;
}

int cq_eq(lua_State* L) {
  auto* a = static_cast<CqRef*>(luaL_testudata(L, 1, kCqType));
  auto* b = static_cast<CqRef*>(luaL_testudata(L, 2, kCqType));
  lua_pushboolean(L, a && b && a->cq == b->cq);
  return 1;
}

}  // namespace

void open_cq(lua_State* L) {
  static const luaL_Reg methods[] = {
      {"poll", l_poll}, {"wait", l_wait}, {"notify", l_notify}, {"wait_event", l_wait_event}, {nullptr, nullptr}};
  luaL_newmetatable(L, kCqType);
  luaL_newlib(L, methods);
  lua_pushcclosure(L, cq_index, 1);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, cq_eq);
  lua_setfield(L, -2, "__eq");
  lua_pop(L, 1);
}

void push_cq(lua_State* L, ibv_cq* cq, ibv_comp_channel* channel, const std::string& qp) {
  auto* c = static_cast<CqRef*>(lua_newuserdatauv(L, sizeof(CqRef), 0));
  *c = {cq, channel, qp.c_str()};
  luaL_setmetatable(L, kCqType);
}

}  // namespace qpo::lua
