// Qp: a scenario QP by name, with verbs-level posting (one ibv_post_* per call; a list of WRs
// becomes one chained post).
#include <vector>

#include "dataplane/error.h"
#include "dataplane/op.h"
#include "dataplane/post.h"
#include "lua/bindings.h"
#include "lua/guard.h"
#include "lua/runtime.h"
#include "verbs/qp_control.h"

namespace qpo::lua {

namespace dp = qpo::dataplane;

namespace {

constexpr const char* kMethods = "qpo.Qp.methods";
constexpr size_t kMaxList = 4096;

struct QpRef {
  dp::Endpoint* ep;
};

dp::Endpoint& self(lua_State* L, const char* call) { return check_qp(L, 1, call); }

uint64_t next_id(lua_State* L) {
  // Ids a script does not choose count up per state, below the data path's reserved range.
  lua_getfield(L, LUA_REGISTRYINDEX, "qpo.next_id");
  lua_Integer id = lua_tointeger(L, -1) + 1;
  lua_pop(L, 1);
  lua_pushinteger(L, id);
  lua_setfield(L, LUA_REGISTRYINDEX, "qpo.next_id");
  return static_cast<uint64_t>(id);
}

const dp::LocalMr& mr_by_name(const dp::Endpoint& ep, const std::optional<std::string>& name) {
  return name ? dp::local_mr(ep, *name) : dp::default_local_mr(ep);
}

// sge = { {mr=, offset=, size=}, ... } or the flat mr/offset/size fields.
int read_sges(lua_State* L, const Fields& f, const dp::Endpoint& ep, dp::Segment* out, bool size_required) {
  if (f.push("sge") == LUA_TTABLE) {
    int t = lua_gettop(L);
    int n = static_cast<int>(lua_rawlen(L, t));
    if (n > dp::kMaxSge) throw ArgError(f.call() + ": at most " + std::to_string(dp::kMaxSge) + " SGEs");
    for (int i = 1; i <= n; ++i) {
      lua_rawgeti(L, t, i);
      Fields s(L, -1, f.call() + " sge[" + std::to_string(i) + "]");
      s.only({"mr", "offset", "size"});
      auto size = s.size("size");
      if (!size) throw ArgError(s.call() + ": 'size' is required");
      out[i - 1] = {&mr_by_name(ep, s.string("mr")), s.size("offset").value_or(0), static_cast<uint32_t>(*size)};
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
    return n;
  }
  lua_pop(L, 1);
  auto size = f.size("size");
  if (!size && size_required) throw ArgError(f.call() + ": 'size' is required (or give sge = {...})");
  if (size && *size > UINT32_MAX) throw ArgError(f.call() + ": size exceeds 4 GiB");
  uint32_t len = size ? static_cast<uint32_t>(*size) : 0;
  out[0] = {&mr_by_name(ep, f.string("mr")), f.size("offset").value_or(0), len};
  return len > 0 || size ? 1 : 0;
}

dp::SendRequest read_send(lua_State* L, int index, const dp::Endpoint& ep, const std::string& call) {
  Fields f(L, index, call);
  f.only({"op", "id", "mr", "offset", "size", "sge", "remote", "remote_offset", "imm", "compare", "swap", "add",
          "signaled", "inline", "fence", "solicited", "invalidate_rkey"});
  dp::SendRequest r;
  std::string op = f.string("op").value_or("send");
  auto parsed = dp::parse_op(op);
  if (!parsed || *parsed == dp::Op::Recv)
    throw ArgError(call + ": unknown op '" + op + "' (send send_imm write write_imm read cas faa send_inv)");
  r.op = *parsed;
  const dp::OpInfo& info = dp::op_info(r.op);
  if (auto id = f.integer("id")) {
    if (*id < 0 || static_cast<uint64_t>(*id) >= dp::kUserIdLimit) throw ArgError(call + ": id must be in [0, 2^62)");
    r.id = static_cast<uint64_t>(*id);
  } else {
    r.id = next_id(L);
  }
  bool has_size = f.has("size") || f.has("sge");
  if (info.atomic && !has_size) {
    r.sge[0] = {&mr_by_name(ep, f.string("mr")), f.size("offset").value_or(0), 8};
    r.num_sge = 1;
  } else {
    r.num_sge = read_sges(L, f, ep, r.sge, true);
  }
  if (info.remote) {
    auto remote = f.string("remote");
    r.remote = remote ? &dp::remote_mr(ep, *remote) : &dp::default_remote_mr(ep);
    r.remote_offset = f.size("remote_offset").value_or(0);
  }
  r.imm = static_cast<uint32_t>(f.integer("imm").value_or(0));
  if (r.op == dp::Op::FetchAdd) r.compare_add = static_cast<uint64_t>(f.integer("add").value_or(1));
  if (r.op == dp::Op::SendInv) r.invalidate_rkey = static_cast<uint32_t>(f.integer("invalidate_rkey").value_or(0));
  if (r.op == dp::Op::CmpSwap) {
    r.compare_add = static_cast<uint64_t>(f.integer("compare").value_or(0));
    r.swap = static_cast<uint64_t>(f.integer("swap").value_or(0));
  }
  r.signaled = f.boolean("signaled").value_or(true);
  r.inline_data = f.boolean("inline").value_or(false);
  r.fence = f.boolean("fence").value_or(false);
  r.solicited = f.boolean("solicited").value_or(false);
  return r;
}

// True when the table at `index` is a list of WR tables rather than one WR.
bool is_list(lua_State* L, int index) {
  if (lua_rawlen(L, index) == 0) return false;
  bool table = lua_rawgeti(L, index, 1) == LUA_TTABLE;
  lua_pop(L, 1);
  return table;
}

// qp:post_send(wr) or qp:post_send{wr, wr, ...} -> number of WRs posted
int l_post_send(lua_State* L) {
  return guarded(L, [&] {
    dp::Endpoint& ep = self(L, "post_send");
    if (lua_type(L, 2) != LUA_TTABLE) throw ArgError("qp:post_send: expected a WR table or a list of them");
    std::vector<dp::SendRequest> reqs;
    if (is_list(L, 2)) {
      size_t n = lua_rawlen(L, 2);
      if (n > kMaxList) throw ArgError("qp:post_send: at most " + std::to_string(kMaxList) + " WRs per post list");
      for (size_t i = 1; i <= n; ++i) {
        lua_rawgeti(L, 2, static_cast<lua_Integer>(i));
        reqs.push_back(read_send(L, -1, ep, "post_send[" + std::to_string(i) + "]"));
        lua_pop(L, 1);
      }
    } else {
      reqs.push_back(read_send(L, 2, ep, "post_send{}"));
    }
    dp::post_sends(ep, reqs);
    if (reqs.size() == 1) {
      lua_pushinteger(L, static_cast<lua_Integer>(reqs[0].id));
      return 1;
    }
    lua_pushinteger(L, static_cast<lua_Integer>(reqs.size()));
    return 1;
  });
}

// qp:post_recv{mr=, offset=, size=, id=, count=, stride=} or a list of such tables
int l_post_recv(lua_State* L) {
  return guarded(L, [&] {
    dp::Endpoint& ep = self(L, "post_recv");
    if (lua_type(L, 2) != LUA_TTABLE) throw ArgError("qp:post_recv: expected a WR table or a list of them");
    std::vector<dp::RecvRequest> reqs;
    auto one = [&](int index, const std::string& call) {
      Fields f(L, index, call);
      f.only({"id", "mr", "offset", "size", "sge", "count", "stride"});
      dp::RecvRequest r;
      r.num_sge = read_sges(L, f, ep, r.sge, true);
      auto id = f.integer("id");
      if (id && (*id < 0 || static_cast<uint64_t>(*id) >= dp::kUserIdLimit)) throw ArgError(call + ": id must be in [0, 2^62)");
      int64_t count = f.integer("count").value_or(1);
      if (count < 1 || static_cast<size_t>(count) > kMaxList)
        throw ArgError(call + ": count must be between 1 and " + std::to_string(kMaxList));
      if (count > 1 && r.num_sge != 1) throw ArgError(call + ": count needs exactly one SGE");
      uint64_t stride = f.size("stride").value_or(r.num_sge ? r.sge[0].length : 0);
      for (int64_t i = 0; i < count; ++i) {
        dp::RecvRequest k = r;
        k.id = id ? static_cast<uint64_t>(*id + i) : next_id(L);
        if (i > 0) k.sge[0].offset += stride * static_cast<uint64_t>(i);
        reqs.push_back(k);
      }
    };
    if (is_list(L, 2)) {
      size_t n = lua_rawlen(L, 2);
      for (size_t i = 1; i <= n; ++i) {
        lua_rawgeti(L, 2, static_cast<lua_Integer>(i));
        one(lua_gettop(L), "post_recv[" + std::to_string(i) + "]");
        lua_pop(L, 1);
      }
    } else {
      one(2, "post_recv{}");
    }
    dp::post_recvs(ep, reqs);
    lua_pushinteger(L, static_cast<lua_Integer>(reqs.size()));
    return 1;
  });
}

// qp:mr([name]) -> Buffer (default: the QP's first local MR)
int l_mr(lua_State* L) {
  return guarded(L, [&] {
    dp::Endpoint& ep = self(L, "mr");
    if (!lua_isnoneornil(L, 2) && lua_type(L, 2) != LUA_TSTRING) throw ArgError("qp:mr([name]): name must be a string");
    std::string name = lua_isnoneornil(L, 2) ? "" : lua_tostring(L, 2);
    if (name.empty()) {
      const dp::LocalMr& mr = dp::default_local_mr(ep);  // throws with the message
      push_buffer(L, mr, *ep.local_mrs.first().first);
      return 1;
    }
    const dp::LocalMr& mr = dp::local_mr(ep, name);  // throws naming the QP and the MRs it has
    push_buffer(L, mr, *ep.local_mrs.entry(name).first);
    return 1;
  });
}

// qp:remote([name]) -> {name, addr, rkey, length} of the peer's MR
int l_remote(lua_State* L) {
  return guarded(L, [&] {
    dp::Endpoint& ep = self(L, "remote");
    std::string name = lua_type(L, 2) == LUA_TSTRING ? lua_tostring(L, 2) : "";
    const dp::RemoteMr& r = name.empty() ? dp::default_remote_mr(ep) : dp::remote_mr(ep, name);
    if (name.empty()) name = *ep.remote_mrs.first().first;
    lua_createtable(L, 0, 4);
    lua_pushstring(L, name.c_str());
    lua_setfield(L, -2, "name");
    lua_pushinteger(L, static_cast<lua_Integer>(r.addr));
    lua_setfield(L, -2, "addr");
    lua_pushinteger(L, r.rkey);
    lua_setfield(L, -2, "rkey");
    lua_pushinteger(L, static_cast<lua_Integer>(r.length));
    lua_setfield(L, -2, "length");
    return 1;
  });
}

template <typename Names>
int push_names(lua_State* L, const Names& names) {
  lua_newtable(L);
  int i = 0;
  names.for_each([&](const std::string& name, const auto&) {
    lua_pushstring(L, name.c_str());
    lua_rawseti(L, -2, ++i);
  });
  return 1;
}

int l_mrs(lua_State* L) {
  return guarded(L, [&] { return push_names(L, self(L, "mrs").local_mrs); });
}
int l_remotes(lua_State* L) {
  return guarded(L, [&] { return push_names(L, self(L, "remotes").remote_mrs); });
}

// qp:state() -> "RTS" (ibv_query_qp)
int l_state(lua_State* L) {
  return guarded(L, [&] {
    dp::Endpoint& ep = self(L, "state");
    if (!ep.qp) throw ArgError("qp:state: QP '" + ep.qp_name + "' has no verbs QP");
    ibv_qp_state state{};
    if (int e = verbs::query_state(ep.qp, &state)) dp::post_error(ep.qp_name, "ibv_query_qp", e, "");
    static const char* names[] = {"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR"};
    lua_pushstring(L, state <= IBV_QPS_ERR ? names[state] : "UNKNOWN");
    return 1;
  });
}

int qp_index(lua_State* L) {
  auto* q = static_cast<QpRef*>(luaL_checkudata(L, 1, kQpType));
  const char* key = lua_tostring(L, 2);
  if (!key) return 0;
  const dp::Endpoint& ep = *q->ep;
  std::string_view k = key;
  if (k == "name") lua_pushstring(L, ep.qp_name.c_str());
  else if (k == "type") lua_pushstring(L, ep.type_name.c_str());
  else if (k == "peer") lua_pushstring(L, ep.peer_name.c_str());
  else if (k == "qpn") lua_pushinteger(L, ep.qp ? ep.qp->qp_num : 0);
  else if (k == "max_inline") lua_pushinteger(L, ep.max_inline_data);
  else if (k == "max_send_wr") lua_pushinteger(L, ep.max_send_wr);
  else if (k == "max_recv_wr") {  // nil when not known (0 would read as a full RQ)
    if (ep.recv_limited || ep.max_recv_wr) lua_pushinteger(L, ep.max_recv_wr);
    else lua_pushnil(L);
  }
  else if (k == "has_srq") lua_pushboolean(L, ep.srq != nullptr);
  else if (k == "send_cq") {
    if (!ep.send_cq) return 0;
    push_cq(L, ep.send_cq, ep.send_channel, ep.qp_name);
  } else if (k == "recv_cq") {
    if (!ep.recv_cq) return 0;
    push_cq(L, ep.recv_cq, ep.recv_channel, ep.qp_name);
  } else {
    lua_getfield(L, LUA_REGISTRYINDEX, kMethods);
    lua_getfield(L, -1, key);
  }
  return 1;
}

int qp_tostring(lua_State* L) {
  auto* q = static_cast<QpRef*>(luaL_checkudata(L, 1, kQpType));
  lua_pushfstring(L, "Qp(%s, %s)", q->ep->qp_name.c_str(), q->ep->type_name.c_str());
  return 1;
}

int qp_eq(lua_State* L) {
  auto* a = static_cast<QpRef*>(luaL_testudata(L, 1, kQpType));
  auto* b = static_cast<QpRef*>(luaL_testudata(L, 2, kQpType));
  lua_pushboolean(L, a && b && a->ep == b->ep);
  return 1;
}

}  // namespace

void open_qp(lua_State* L) {
  static const luaL_Reg methods[] = {{"post_send", l_post_send}, {"post_recv", l_post_recv}, {"mr", l_mr},
                                     {"remote", l_remote},       {"mrs", l_mrs},             {"remotes", l_remotes},
                                     {"state", l_state},         {nullptr, nullptr}};
  luaL_newlib(L, methods);
  lua_setfield(L, LUA_REGISTRYINDEX, kMethods);
  luaL_newmetatable(L, kQpType);
  lua_pushcfunction(L, qp_index);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, qp_tostring);
  lua_setfield(L, -2, "__tostring");
  lua_pushcfunction(L, qp_eq);
  lua_setfield(L, -2, "__eq");
  lua_pop(L, 1);
}

void add_qp_methods(lua_State* L, const luaL_Reg* fns) {
  lua_getfield(L, LUA_REGISTRYINDEX, kMethods);
  luaL_setfuncs(L, fns, 0);
  lua_pop(L, 1);
}

void push_qp(lua_State* L, dp::Endpoint& ep) {
  auto* q = static_cast<QpRef*>(lua_newuserdatauv(L, sizeof(QpRef), 0));
  q->ep = &ep;
  luaL_setmetatable(L, kQpType);
}

dp::Endpoint& check_qp(lua_State* L, int index, const char* call) {
  auto* q = static_cast<QpRef*>(luaL_testudata(L, index, kQpType));
  if (!q) throw ArgError(std::string("qp:") + call + ": expected a Qp (call it as qp:" + call + "(...))");
  return *q->ep;
}

}  // namespace qpo::lua
