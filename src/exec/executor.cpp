// The run, phase by phase: open devices -> capability check -> create objects -> RESET->INIT
// -> post receives -> exchange -> RTR/RTS -> smoke traffic -> workloads -> extra transitions
// (lock-step across QPs, so both ends of a pair recover together) -> teardown in reverse
// creation order. Any failure jumps to teardown; teardown always runs.
#include "exec/executor.h"

#include <atomic>
#include <chrono>
#include <map>

#include "exec/steps.h"
#include "util/strings.h"

namespace qpo::exec {

namespace {

std::atomic<bool> g_stop{false};

using plan::Phase;

struct Executor {
  const scenario::Scenario& s;
  const plan::Plan& p;
  const RunOptions& o;
  RunState st;

  Executor(const scenario::Scenario& sc, const plan::Plan& pl, const RunOptions& opt) : s(sc), p(pl), o(opt) {
    st.scenario = &s;
    st.report.scenario = s.name;
    st.report.file = s.file;
    st.want_slots = o.smoke || !s.workloads.empty();
  }

  bool ok() const { return st.report.verdict == report::Verdict::Pass && !g_stop; }

  void check_stop() {
    if (g_stop && st.report.verdict == report::Verdict::Pass) st.report.fail("interrupted (SIGINT); tore down");
  }

  // Steps of `phase` for every host; for BringUp, `after_exchange` picks the half.
  template <typename Fn>
  void for_steps(Phase phase, int bring_up_half, Fn fn) {
    for (const auto& h : p.hosts) {
      bool seen_exchange = false;
      for (const auto& step : h.steps) {
        if (step.phase == Phase::Exchange) seen_exchange = true;
        if (step.phase != phase) continue;
        if (phase == Phase::BringUp && (bring_up_half == 0) == seen_exchange) continue;
        check_stop();
        if (!ok()) return;
        fn(h, step);
      }
    }
  }

  void setup() {
    for_steps(Phase::Setup, -1, [&](const plan::HostPlan& h, const plan::Step& step) {
      if (step.verb == "ibv_open_device") {
        const auto* d = s.device(step.object);
        auto& r = run_step(st, h.host, "setup", step.verb, step.object, "name=" + d->dev_name, [&] { open_device(st, *d); });
        if (r.status == report::StepStatus::Ok) {
          auto& ds = st.devices.at(d->name);
          r.message = ds.ctx().device_name() + " port " + std::to_string(d->port) + " " +
                      (ds.ctx().port_attr().state == IBV_PORT_ACTIVE ? "ACTIVE" : "not active") + ", gid[" +
                      std::to_string(ds.gid_index) + "]=" + verbs::gid_text(ds.gid) + ", active_mtu " +
                      std::to_string(128 << ds.ctx().port_attr().active_mtu);
          if (!st.report.device.empty()) st.report.device += ", ";
          st.report.device += ds.ctx().device_name();
        }
        return;
      }
      if (step.verb == "ibv_query_port" || step.verb == "ibv_query_gid") return;  // done with the open
      if (!capability_checked_) {
        capability_checked_ = true;
        std::string why = unsupported_reason(st);
        if (!why.empty()) {
          report::StepResult r;
          r.host = h.host;
          r.phase = "setup";
          r.verb = "ibv_query_device";
          r.status = report::StepStatus::Skipped;
          r.message = why;
          st.report.add(r);
          st.report.verdict = report::Verdict::Unsupported;
          st.report.reason = why;
          return;
        }
      }
      if (step.verb.rfind("ibv_create_qp", 0) == 0 && !create_started_) {
        create_started_ = true;
        first_create_ = std::chrono::steady_clock::now();
      }
      auto& r = run_step(st, h.host, "setup", step.verb, step.object, "", [&] { create_object(st, step); });
      if (r.status == report::StepStatus::Failed && r.err && verbs::VerbsError("", "", r.err).unsupported()) {
        st.report.verdict = report::Verdict::Unsupported;
        st.report.reason = "unsupported by device (" + provider_of(st) + "): " + r.message;
      }
    });
  }

  void bring_up(int half) {
    for_steps(Phase::BringUp, half, [&](const plan::HostPlan& h, const plan::Step& step) {
      if (step.verb == "ibv_modify_qp") {
        modify_qp(st, "bring-up", st.qps.at(step.object), static_cast<size_t>(step.transition_index), o);
      } else if (step.verb == "ibv_post_recv") {
        auto& q = st.qps.at(step.object);
        run_step(st, h.host, "bring-up", step.verb, step.object, std::to_string(q.spec->cap.max_recv_wr) + " WRs",
                 [&] { post_recvs(st, q, q.spec->cap.max_recv_wr); });
      } else if (step.verb == "ibv_post_srq_recv") {
        run_step(st, h.host, "bring-up", step.verb, step.object, "", [&] { post_srq_recvs(st, step.object); });
      }
    });
  }

  void exchange() {
    // One process holds every host: publishing is reading our own objects. Log what a
    // remote peer would receive, so the run shows the values RTR used.
    for (auto& [name, q] : st.qps) {
      report::StepResult r;
      r.host = q.host;
      r.phase = "exchange";
      r.verb = "publish";
      r.object = name;
      r.status = report::StepStatus::Info;
      r.message = "qp_num " + std::to_string(q.qp->get()->qp_num) + ", sq_psn " + util::hex(q.sq_psn) + ", lid " +
                  std::to_string(q.device->ctx().port_attr().lid) + ", gid " + verbs::gid_text(q.device->gid);
      st.report.add(r);
    }
  }

  void extra_transitions() {
    // Lock-step: the k-th extra transition of every QP, then the (k+1)-th, so peers recover together.
    std::map<std::string, std::vector<size_t>> todo;
    size_t rounds = 0;
    for (auto& [name, q] : st.qps) {
      for (size_t i = 0; i < q.spec->transitions.size(); ++i)
        if (!q.spec->transitions[i].bring_up) todo[name].push_back(i);
      rounds = std::max(rounds, todo[name].size());
    }
    bool any = false;
    for (size_t k = 0; k < rounds && ok(); ++k)
      for (const auto& qp : s.qps) {
        auto it = todo.find(qp.name);
        if (it == todo.end() || k >= it->second.size() || !ok()) continue;
        any = true;
        modify_qp(st, "transitions", st.qps.at(qp.name), it->second[k], o);
        check_stop();
      }
    // After a recovery path back to RTS, traffic must flow again.
    bool recovered = false;
    for (auto& [name, q] : st.qps) recovered |= q.went_through_reset && q.state == spec::QpState::RTS;
    if (any && recovered && ok() && o.smoke) smoke_exchange(st, o, "transitions");
  }

  void teardown() {
    for (auto it = st.owned.rbegin(); it != st.owned.rend(); ++it) {
      auto& res = **it;
      auto start = std::chrono::steady_clock::now();
      int e = res.release();
      report::StepResult r;
      r.phase = "teardown";
      r.verb = res.destroy_verb();
      r.object = res.name();
      r.err = e;
      r.micros = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
      r.status = e ? report::StepStatus::Failed : report::StepStatus::Ok;
      if (e) {
        r.message = verbs::errno_name(e) + ": the object stays allocated";
        st.report.fail(std::string(res.destroy_verb()) + "(" + res.name() + "): " + verbs::errno_name(e));
      }
      st.report.add(r);
    }
    st.owned.clear();
  }

  report::RunReport run() {
    for (const auto& h : s.hosts)
      if (h.address != "localhost" && h.address != "127.0.0.1" && h.address != "::1" && h.address != "local") {
        st.report.verdict = report::Verdict::Error;
        st.report.reason = "host '" + h.name + "' is at " + h.address +
                           "; running on remote hosts needs `qpo agent` (not implemented yet)";
        return st.report;
      }
    try {
      setup();
      if (ok()) bring_up(0);
      if (ok()) exchange();
      if (ok()) bring_up(1);
      if (ok()) {
        st.report.bringup_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - first_create_).count();
        for (const auto& [name, q] : st.qps) st.report.qps_at_rts += q.state == spec::QpState::RTS;
      }
      if (ok() && o.smoke) smoke_exchange(st, o, "traffic");
      if (ok()) run_workloads(st, o);
      if (ok()) extra_transitions();
      check_stop();
    } catch (const std::exception& e) {
      st.report.fail(std::string("internal error: ") + e.what());
    }
    teardown();
    return st.report;
  }

  bool capability_checked_ = false;
  bool create_started_ = false;
  std::chrono::steady_clock::time_point first_create_;
};

}  // namespace

report::StepResult& run_step(RunState& st, const std::string& host, const std::string& phase, const std::string& verb,
                             const std::string& object, const std::string& detail, const std::function<void()>& fn) {
  report::StepResult r;
  r.host = host;
  r.phase = phase;
  r.verb = verb;
  r.object = object;
  r.detail = detail;
  auto start = std::chrono::steady_clock::now();
  try {
    fn();
  } catch (const verbs::VerbsError& e) {
    r.status = report::StepStatus::Failed;
    r.err = e.error();
    r.message = e.what();
    st.report.fail(e.what());
  } catch (const std::exception& e) {
    r.status = report::StepStatus::Failed;
    r.message = e.what();
    st.report.fail(verb + "(" + object + "): " + e.what());
  }
  r.micros = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  return st.report.add(r);
}

report::RunReport run_scenario(const scenario::Scenario& s, const plan::Plan& p, const RunOptions& o) {
  Executor ex(s, p, o);
  return ex.run();
}

void request_stop() { g_stop = true; }
bool stop_requested() { return g_stop; }

}  // namespace qpo::exec
