#include "exec/bringup_program.h"

#include "exec/script_receives.h"
#include "exec/steps.h"

namespace qpo::exec {

namespace {

bool is_create(const plan::Step& step) { return step.verb == "ibv_create_qp" || step.verb == "ibv_create_qp_ex"; }

}  // namespace

void BringUpProgram::compile(RunState& st, const plan::HostPlan& plan) {
  compiled_ = true;
  size_t steps = plan.steps.size();
  lines_.reserve(steps * 2);           // a create may add a "device granted" line
  st.owned.reserve(st.owned.size() + steps * 2);  // a QP and its slot buffer
  for (const auto& step : plan.steps) {
    if (step.phase != plan::Phase::Setup || !is_create(step)) continue;
    ibv_qp_init_attr init{};
    QpState qs = prepare_qp(st, step.object, &init);
    QpState* q = &st.qps.insert_or_assign(step.object, std::move(qs)).first->second;
    creates_.push_back({&step, q, init});
  }
  int half = 0;
  for (const auto& step : plan.steps) {
    if (step.phase == plan::Phase::Exchange) half = 1;
    if (step.phase != plan::Phase::BringUp) continue;
    Op op{&step};
    if (step.verb == "ibv_modify_qp" || step.verb == "ibv_post_recv") {
      auto it = st.qps.find(step.object);
      if (it == st.qps.end()) continue;  // not this host's (the planner only lists its own)
      op.q = &it->second;
    }
    if (step.verb == "ibv_modify_qp") {
      try {
        op.attrs = compile_attrs(*op.q, op.q->spec->transitions[static_cast<size_t>(step.transition_index)]);
      } catch (const std::exception& e) {
        op.error = e.what();
      }
    }
    halves_[half].push_back(std::move(op));
  }
}

void BringUpProgram::create_qps(RunState& st, const std::function<bool()>& go) {
  size_t made = 0;
  for (auto& c : creates_) {
    if (!go()) break;
    report::StepResult& r = st.report.steps.emplace_back();  // written in place, named later
    lines_.created(st.report.steps.size() - 1, *c.step);
    StepTimer timer;
    try {
      create_qp(st, *c.q, c.init);
    } catch (const verbs::VerbsError& e) {  // as run_step reports it
      r.status = report::StepStatus::Failed;
      r.err = e.error();
      r.message = e.what();
      st.report.fail(e.what());
    } catch (const std::exception& e) {
      r.status = report::StepStatus::Failed;
      r.message = e.what();
      st.report.fail(c.step->verb + "(" + c.step->object + "): " + e.what());
    }
    r.micros = timer.micros();
    bool failed = r.status == report::StepStatus::Failed;
    if (failed) {
      note_unsupported(st, r);
      break;
    }
    ++made;
    const ibv_qp_cap& a = c.q->asked_cap;
    const ibv_qp_cap& g = c.q->granted_cap;
    if (a.max_send_wr != g.max_send_wr || a.max_recv_wr != g.max_recv_wr || a.max_send_sge != g.max_send_sge ||
        a.max_recv_sge != g.max_recv_sge || a.max_inline_data != g.max_inline_data) {
      st.report.steps.emplace_back().status = report::StepStatus::Info;
      lines_.granted(st.report.steps.size() - 1, *c.q);
    }
  }
  // QPs never created have no place in the run (publish, traffic and teardown skip them).
  for (size_t i = made; i < creates_.size(); ++i) st.qps.erase(creates_[i].step->object);
  creates_.resize(made);
}

void BringUpProgram::run_half(RunState& st, int half, const RunOptions& o, const std::function<bool()>& go) {
  static const std::string kPhase = "bring-up";
  // Each QP's steps after the exchange are consecutive (RTR then RTS): one lookup per QP.
  const QpState* peer_for = nullptr;
  const RemoteQp* peer = nullptr;
  for (const auto& op : halves_[half]) {
    if (!go()) return;
    const plan::Step& step = *op.step;
    if (step.verb == "ibv_modify_qp") {
      auto index = static_cast<size_t>(step.transition_index);
      if (!op.error.empty()) {
        attr_failure(st, kPhase, *op.q, index, op.error);
        return;
      }
      if (op.attrs.patch_count && peer_for != op.q) {
        peer_for = op.q;
        peer = peer_of(st, *op.q);
      }
      ibv_qp_attr attr{};
      try {
        attr = op.attrs.resolve(*op.q, peer);
      } catch (const std::exception& e) {
        attr_failure(st, kPhase, *op.q, index, e.what());
        return;
      }
      apply_modify(st, kPhase, *op.q, index, attr, o, &lines_);
    } else {
      run_receives(st, op);
    }
  }
}

void BringUpProgram::run_receives(RunState& st, const Op& op) {
  const plan::Step& step = *op.step;
  const auto& s = *st.scenario;
  if (step.verb == "ibv_post_recv" && op.q) {
    uint32_t n = scenario::bringup_receives(s, *op.q->spec);  // fewer when scripts own the RQ
    run_step(st, st.host, "bring-up", step.verb, step.object, std::to_string(n) + " WRs",
             [&] { post_recvs(st, *op.q, n); });
  } else if (step.verb == "ibv_post_srq_recv") {
    const auto* sr = s.srq(step.object);
    uint32_t n = sr ? scenario::bringup_srq_receives(s, *sr) : 0;
    run_step(st, st.host, "bring-up", step.verb, step.object, std::to_string(n) + " WRs",
             [&] { post_srq_receives(st, step.object, n); });
  }
}

}  // namespace qpo::exec
