// Lua-scripted workloads (`script:` in a workload) on the C++ data path (src/lua): the
// executor fills one Endpoint per QP from what it brought up, the script drives them, and
// the script's summary becomes the step's results, judged against the workload's thresholds.
//
// The steps are kept apart so that a host running only some of the workers can reuse them:
// script_spec (check/script_spec.h: the same args `qpo validate` checked), local_endpoints
// (the QPs this session owns), callbacks (progress, log, stop; a cross-host barrier would go
// here), record (the step, the results, the verdict). For now every worker's QP must be in
// this session (one host, or --local).
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>

#include "check/script_spec.h"
#include "exec/progress_line.h"
#include "exec/steps.h"
#include "exec/workload_results.h"
#include "lua/workload.h"

namespace qpo::exec {

namespace {

std::atomic<bool> g_lua_stop{false};

ibv_gid gid_of(const RemoteQp& p) {
  ibv_gid g;
  std::copy(p.gid.begin(), p.gid.end(), g.raw);
  return g;
}

// A UD sender's address handle for its peer. Same name (and so the same object) as the one
// traffic.cpp creates for the smoke exchange: created once per (from, to), owned by the run.
ibv_ah* ud_ah(RunState& st, QpState& from, const std::string& to_name, const RemoteQp& to) {
  std::string name = "qpo.ah." + from.spec->name + "->" + to_name;
  for (auto& r : st.owned)
    if (r->name() == name) return static_cast<verbs::Ah*>(r.get())->get();
  ibv_ah_attr ah{};
  ah.port_num = from.device->ctx().port();
  ah.dlid = to.lid;
  ah.is_global = 1;
  ah.grh.dgid = gid_of(to);
  ah.grh.sgid_index = static_cast<uint8_t>(from.device->gid_index);
  ah.grh.hop_limit = 1;
  return st.own<verbs::Ah>(name, from.pd, ah)->get();
}

ibv_comp_channel* channel_of(const RunState& st, const scenario::Ref& cq) {
  auto it = st.channels.find(cq.name);
  return it == st.channels.end() ? nullptr : it->second->get();
}

// `peer` is the QP this one talks to: its connect:, or for a target without one (a UD
// receiver that anyone may send to) the initiator that named it, so it can answer.
dataplane::Endpoint endpoint_for(RunState& st, QpState& q, const std::string& peer) {
  dataplane::Endpoint e;
  e.qp_name = q.spec->name;
  e.qp_type = q.spec->type_name;
  e.qp = q.qp->get();
  e.pd = q.pd;
  e.send_cq = q.send_cq;
  e.recv_cq = q.recv_cq;
  e.send_channel = channel_of(st, q.spec->send_cq);  // event mode (`events = true`)
  e.recv_channel = channel_of(st, q.spec->recv_cq);
  e.srq = q.srq;
  e.max_send_wr = q.spec->cap.max_send_wr;
  e.max_recv_wr = q.spec->cap.max_recv_wr;
  e.max_inline_data = q.spec->cap.max_inline_data;
  if (auto it = st.dir.qps.find(peer); !peer.empty() && it != st.dir.qps.end()) {
    e.peer_name = peer;
    e.peer_qpn = it->second.qpn;
    e.peer_qkey = it->second.qkey;
    if (e.qp_type == "UD") e.peer_ah = ud_ah(st, q, peer, it->second);
  }
  for (const auto& [name, mr] : st.mrs) {
    const auto* m = st.scenario->mr(name);
    if (m && m->pd.name == q.spec->pd.name) e.local_mrs[name] = {mr->get(), mr->data(), mr->length()};
  }
  for (const auto& [name, r] : st.dir.mrs) e.remote_mrs[name] = {r.addr, r.rkey, r.length};
  return e;
}

// The endpoint of every worker's QP; "" when all are in this session, else what is missing.
std::string local_endpoints(RunState& st, const scenario::Workload& w, const lua::WorkloadSpec& spec,
                            std::map<std::string, dataplane::Endpoint>& out) {
  for (const auto& worker : spec.workers)
    for (const auto& name : worker.qps) {
      auto it = st.qps.find(name);
      if (it == st.qps.end())
        return "Lua workloads need every QP in one session for now; '" + name +
               "' is on another host (run with --local, or see the multi-host notes)";
      std::string peer = it->second.spec->connect.name;
      if (peer.empty() && worker.role == "target") {
        for (const auto& ref : w.initiators()) {
          const auto* q = st.scenario->qp(ref.name);
          if (q && q->connect.name == name) {
            peer = ref.name;
            break;
          }
        }
      }
      out[name] = endpoint_for(st, it->second, peer);
    }
  return "";
}

lua::Callbacks callbacks(ProgressLine& line) {
  lua::Callbacks cb;
  g_lua_stop = stop_requested();
  cb.stop = &g_lua_stop;
  cb.log = [&line](const std::string& worker, const std::string& text) {
    line.log("[" + (worker.empty() ? std::string("script") : worker) + "] " + text);
  };
  // Streams report about once a second: draw the live line (on a terminal only), and pass a
  // SIGINT on to the workload's stop flag, which run_workload relays to the workers.
  cb.progress = [&line](const std::string& worker, const dataplane::StreamProgress& p) {
    if (stop_requested()) g_lua_stop = true;
    line.update(worker, p);
  };
  return cb;
}

// The step (with the results), and the verdict: a failed script, or a missed threshold.
bool record(RunState& st, const scenario::Workload& w, report::StepResult r, const lua::WorkloadResult& result) {
  if (!result.ok) {
    r.status = report::StepStatus::Failed;
    r.message = result.error;
    st.report.add(std::move(r));
    st.report.fail("workload '" + w.name + "': " + result.error);
    return false;
  }
  auto results = std::make_shared<report::WorkloadResult>(workload_result(w, result.summary));
  for (const auto& t : w.thresholds) results->thresholds.push_back(judge(t, result.summary));
  std::string missed = missed_thresholds(w, results->thresholds);
  r.message = headline(result.summary);
  r.workload = std::move(results);
  if (!missed.empty()) {
    r.status = report::StepStatus::Failed;
    r.message += "; thresholds missed";
  }
  st.report.add(std::move(r));
  if (!missed.empty()) st.report.fail(missed);
  return missed.empty();
}

}  // namespace

bool run_lua_workload(RunState& st, const scenario::Workload& w, const RunOptions& o) {
  report::StepResult r;
  r.host = st.host;
  r.phase = "traffic";
  r.verb = "script";
  r.object = w.name;
  r.detail = w.script + " on " + w.qp.name;
  for (const auto& more : w.more_qps) r.detail += ", " + more.name;
  lua::WorkloadSpec spec = check::script_spec(*st.scenario, w);
  spec.timeout_ms = o.timeout_ms;
  std::map<std::string, dataplane::Endpoint> endpoints;
  if (auto problem = local_endpoints(st, w, spec, endpoints); !problem.empty()) {
    r.status = report::StepStatus::Failed;
    r.message = problem;
    st.report.add(std::move(r));
    st.report.fail("workload '" + w.name + "': " + problem);
    return false;
  }
  ProgressLine line(STDERR_FILENO, w.name);
  lua::Callbacks cb = callbacks(line);
  auto start = std::chrono::steady_clock::now();
  auto result = lua::run_workload(spec, endpoints, cb);
  line.finish();
  r.micros = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  return record(st, w, std::move(r), result);
}

}  // namespace qpo::exec
