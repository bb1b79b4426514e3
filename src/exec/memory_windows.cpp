#include "exec/memory_windows.h"

#include <chrono>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "exec/endpoints.h"
#include "exec/steps.h"
#include "plan/plan.h"
#include "util/strings.h"
#include "util/wc_status_names.h"

namespace qpo::exec {

namespace {

constexpr uint64_t kWindowTag = 0x4d57000000000000ull;  // "MW": bind/invalidate work requests

// The completion of the work request `wr_id` on `q`'s send CQ, within the run's timeout.
void await_completion(RunState& st, QpState& q, uint64_t wr_id, int timeout_ms, const std::string& what) {
  dataplane::CqHandle cq(q.send_cq, access_for(st, q, Reader::Sends));
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    ibv_wc wc[8];
    int n = cq.poll(8, wc);
    if (n < 0) throw std::runtime_error("ibv_poll_cq failed while waiting for " + what);
    for (int i = 0; i < n; ++i) {
      if (wc[i].wr_id != wr_id) continue;
      if (wc[i].status != IBV_WC_SUCCESS)
        throw std::runtime_error(what + " completed with " + util::wc_status_name(wc[i].status) + " (QP '" +
                                 q.facts->name + "' is now in ERR)");
      return;
    }
    if (std::chrono::steady_clock::now() >= deadline)
      throw std::runtime_error("no completion of " + what + " on QP '" + q.facts->name + "' within " +
                               std::to_string(timeout_ms) + " ms");
    if (n == 0) std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

std::string rkey_text(uint32_t rkey) { return util::hex(rkey); }

}  // namespace

void alloc_mw(RunState& st, const plan::Step& step) {
  const auto& window = st.plan->window_of(step);
  MwState ms;
  ms.mw = st.own<verbs::Mw>(window.name, st.pds.at(window.pd)->get(), window.type);
  ms.rkey = ms.mw->get()->rkey;
  st.mws.put(step.id, ms);
}

bool bind_mw(RunState& st, report::RunReport& log, const RunOptions& o, const plan::Step& step) {
  const auto& window = st.plan->window_of(step);
  const auto& w = window;
  auto& r = run_step(log, st.host, "traffic", step.verb, w.name, "bind on QP " + w.bind_qp_name, [&] {
    auto& ms = st.mws.at(step.id);
    auto& q = st.qps.at(window.bind_qp);
    verbs::Mr* mr = st.mrs.at(window.mr);
    verbs::WindowBind b{mr->get(), reinterpret_cast<uintptr_t>(mr->data()) + w.offset, w.length, w.access};
    uint64_t wr_id = kWindowTag | static_cast<uint64_t>(q.ordinal);
    uint32_t rkey = 0;
    if (w.type == 1) {
      if (int e = verbs::bind_type1(q.qp->get(), *ms.mw, b, wr_id, &rkey))
        throw verbs::VerbsError("ibv_bind_mw", w.name, e, "on QP " + q.facts->name);
    } else {
      rkey = verbs::next_rkey(ms.rkey);
      if (int e = verbs::post_bind_type2(q.qp->get(), *ms.mw, b, rkey, wr_id))
        throw verbs::VerbsError("ibv_post_send", w.name, e, "IBV_WR_BIND_MW on QP " + q.facts->name);
    }
    await_completion(st, q, wr_id, o.timeout_ms, "the bind of window '" + w.name + "'");
    ms.rkey = rkey;
    ms.bound = true;
    st.mws_bound.push_back(step.id);
  });
  if (r.status == report::StepStatus::Ok) {
    const auto& ms = st.mws.at(step.id);
    r.message = "type " + std::to_string(w.type) + ", " + std::to_string(w.length) + " B of " + w.mr_name + " from " +
                std::to_string(w.offset) + ", rkey " + rkey_text(ms.rkey);
  }
  return r.status != report::StepStatus::Failed;
}

bool invalidate_mw(RunState& st, report::RunReport& log, const RunOptions& o, const plan::Step& step) {
  const auto& window = st.plan->window_of(step);
  const auto& w = window;
  uint32_t old = 0;
  auto& r = run_step(log, st.host, "traffic", step.verb, w.name, "on QP " + w.bind_qp_name, [&] {
    auto& ms = st.mws.at(step.id);
    auto& q = st.qps.at(window.bind_qp);
    uint64_t wr_id = kWindowTag | (1ull << 32) | static_cast<uint64_t>(q.ordinal);
    old = ms.rkey;
    if (w.type == 1) {
      uint32_t rkey = 0;
      if (int e = verbs::unbind_type1(q.qp->get(), *ms.mw, st.mrs.at(window.mr)->get(), wr_id, &rkey))
        throw verbs::VerbsError("ibv_bind_mw", w.name, e, "length 0 (unbind) on QP " + q.facts->name);
      await_completion(st, q, wr_id, o.timeout_ms, "the unbind of window '" + w.name + "'");
      ms.rkey = rkey;
    } else {
      if (int e = verbs::post_local_invalidate(q.qp->get(), ms.rkey, wr_id))
        throw verbs::VerbsError("ibv_post_send", w.name, e, "IBV_WR_LOCAL_INV on QP " + q.facts->name);
      await_completion(st, q, wr_id, o.timeout_ms, "the local invalidation of window '" + w.name + "'");
    }
    ms.bound = false;
  });
  if (r.status == report::StepStatus::Ok)
    r.message = "rkey " + rkey_text(old) + " no longer valid" + (w.type == 1 ? " (unbound)" : " (IBV_WR_LOCAL_INV)");
  return r.status != report::StepStatus::Failed;
}

bool publish_mws(RunState& st, report::RunReport& log, const plan::Step& step) {
  std::ostringstream mine;
  for (plan::ObjectId id : st.mws_bound) {
    const auto& window = st.plan->windows.at(id);
    const auto& w = window;
    const auto& ms = st.mws.at(id);
    verbs::Mr* mr = st.mrs.at(window.mr);
    uint64_t addr = (w.access & IBV_ACCESS_ZERO_BASED) ? 0 : reinterpret_cast<uintptr_t>(mr->data()) + w.offset;
    mine << id << ' ' << addr << ' ' << w.length << ' ' << ms.rkey << '\n';  // by plan id, as every host plans it
  }
  st.mws_bound.clear();
  std::vector<std::string> notes;
  auto& r = run_step(log, st.host, "traffic", "publish", step.object, "memory windows", [&] {
    if (!st.channel || !st.channel->gather("mws " + std::to_string(step.stage), mine.str(), &notes)) {
      // Most often a host failed before it could publish (a bind refused): its own steps say
      // why; this host only learns that the meeting broke.
      std::string why = st.channel ? st.channel->failure() : "";
      throw std::runtime_error("another host failed before the windows' rkeys were exchanged: " +
                               (why.empty() ? std::string("see its steps (a bind refused, or a host lost)") : why));
    }
    for (const auto& note : notes) {
      std::istringstream lines(note);
      // A line per window, each whole: a line cut short would lose a window unsaid.
      for (std::string line; std::getline(lines, line);) {
        if (line.find_first_not_of(" \t") == std::string::npos) continue;
        std::istringstream in(line);
        plan::ObjectId id = plan::kNoObject;
        RemoteMr m;
        if (!(in >> id >> m.addr >> m.length >> m.rkey) || !(in >> std::ws).eof())
          throw std::runtime_error("a host published a window line that does not parse: '" + line + "'");
        if (id >= st.plan->windows.size())
          throw std::runtime_error("a host published window #" + std::to_string(id) + ", which the plan does not have");
        m.host = st.plan->windows[id].host;
        st.dir.mrs[{MrKey::Kind::Window, id}] = m;
      }
    }
  });
  if (r.status == report::StepStatus::Failed) st.channel_broken = true;
  else r.message = "every host knows the windows' rkeys";
  return r.status != report::StepStatus::Failed;
}

}  // namespace qpo::exec
