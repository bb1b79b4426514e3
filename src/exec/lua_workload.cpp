// Lua-scripted workloads (`script:` in a workload) on the C++ data path (src/lua): the
// executor fills one Endpoint per QP from what it brought up, and the script drives them.
// Both ends must live in this session for now (one host, or --local); across agents the
// script would need the hosts' barriers joined through the Channel.
#include <atomic>
#include <chrono>

#include "exec/steps.h"
#include "lua/workload.h"

namespace qpo::exec {

namespace {

std::atomic<bool> g_lua_stop{false};

dataplane::Endpoint endpoint_for(RunState& st, QpState& q) {
  dataplane::Endpoint e;
  e.qp_name = q.spec->name;
  e.qp_type = q.spec->type_name;
  e.qp = q.qp->get();
  e.pd = q.pd;
  e.send_cq = q.send_cq;
  e.recv_cq = q.recv_cq;
  e.srq = q.srq;
  e.max_send_wr = q.spec->cap.max_send_wr;
  e.max_recv_wr = q.spec->cap.max_recv_wr;
  e.max_inline_data = q.spec->cap.max_inline_data;
  if (const auto* peer = peer_of(st, q)) {
    e.peer_name = q.spec->connect.name;
    e.peer_qpn = peer->qpn;
    e.peer_qkey = peer->qkey;
  }
  for (const auto& [name, mr] : st.mrs) {
    const auto* m = st.scenario->mr(name);
    if (m && m->pd.name == q.spec->pd.name) e.local_mrs[name] = {mr->get(), mr->data(), mr->length()};
  }
  for (const auto& [name, r] : st.dir.mrs) e.remote_mrs[name] = {r.addr, r.rkey, r.length};
  return e;
}

}  // namespace

bool run_lua_workload(RunState& st, const scenario::Workload& w, const RunOptions& o) {
  auto& q = st.qps.at(w.qp.name);
  report::StepResult r;
  r.host = st.host;
  r.phase = "traffic";
  r.verb = "script";
  r.object = w.name;
  r.detail = w.script + " on " + w.qp.name;
  auto peer_local = st.qps.find(q.spec->connect.name);
  if (peer_local == st.qps.end()) {
    r.status = report::StepStatus::Failed;
    r.message = "Lua workloads need both QPs in one session for now; '" + q.spec->connect.name +
                "' is on another host (run with --local, or see the multi-host notes)";
    st.report.add(r);
    st.report.fail("workload '" + w.name + "': " + r.message);
    return false;
  }
  std::map<std::string, dataplane::Endpoint> endpoints;
  endpoints[q.spec->name] = endpoint_for(st, q);
  endpoints[peer_local->first] = endpoint_for(st, peer_local->second);
  lua::WorkloadSpec spec;
  spec.name = w.name;
  spec.script = w.script;
  spec.timeout_ms = o.timeout_ms;
  spec.args["size"] = static_cast<int64_t>(w.size);
  spec.args["iterations"] = static_cast<int64_t>(w.iterations);
  if (w.local_mr) spec.args["local_mr"] = w.local_mr.name;
  if (w.remote_mr) spec.args["remote_mr"] = w.remote_mr.name;
  spec.workers = {{q.spec->name, "initiator", {q.spec->name}}, {peer_local->first, "target", {peer_local->first}}};
  lua::Callbacks cb;
  g_lua_stop = stop_requested();
  cb.stop = &g_lua_stop;
  auto start = std::chrono::steady_clock::now();
  auto result = lua::run_workload(spec, endpoints, cb);
  r.micros = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  if (!result.ok) {
    r.status = report::StepStatus::Failed;
    r.message = result.error;
    st.report.add(r);
    st.report.fail("workload '" + w.name + "': " + result.error);
    return false;
  }
  r.message = result.summary.is_nil() ? "ok" : result.summary.to_json();
  st.report.add(r);
  return true;
}

}  // namespace qpo::exec
