#include "exec/bringup_program.h"

#include <algorithm>
#include <atomic>
#include <map>

#include "exec/endpoints.h"
#include "scenario/script_qps.h"
#include "exec/steps.h"

namespace qpo::exec {

namespace {

bool is_create(const plan::Step& step) { return step.kind == plan::StepKind::CreateQp; }

// What stops the program between two verbs: Ctrl-C, and the channel telling this host to
// stop (another host waited for it past --phase-timeout). Read once per loop.
struct Stops {
  const std::atomic<bool>& interrupt;
  const StopRequest* channel;
  explicit Stops(const RunState& st)
      : interrupt(stop_flag()), channel(st.channel ? st.channel->stop_request() : nullptr) {}
};

// Whether the next step may run: checked before every verb, so no std::function and no
// call into the session; HostSession turns a stop into the run's verdict afterwards.
bool goes_on(const RunState& st, const Stops& stops) {
  return st.report.verdict == report::Verdict::Pass && !stops.interrupt.load(std::memory_order_relaxed) &&
         !(stops.channel && stops.channel->requested.load(std::memory_order_relaxed));
}

}  // namespace

void BringUpProgram::compile(RunState& st, const plan::HostPlan& plan) {
  compiled_ = true;
  size_t steps = plan.steps.size();
  lines_.reserve(steps * 2);           // a create may add a "device granted" line
  st.owned.reserve(st.owned.size() + steps * 2);  // a QP and its slot buffer
  std::map<std::string_view, uint32_t> index_of;  // QP name -> its index in creates_
  std::map<std::string, int> slot_step;           // "qpo.slots.qa" -> its plan step
  for (const auto& step : plan.steps)
    if (step.kind == plan::StepKind::RegSlots) slot_step[step.object] = step.index;
  for (const auto& step : plan.steps) {
    if (step.phase != plan::Phase::Setup || !is_create(step)) continue;
    ibv_qp_init_attr init{};
    auto slots = slot_step.find("qpo.slots." + step.object);
    QpState qs = prepare_qp(st, step.object, &init, slots != slot_step.end());
    QpState* q = &st.qps.insert_or_assign(step.object, std::move(qs)).first->second;
    try {
      StepTimer timer;
      make_qp_owner(st, *q);
      if (q->slots) {
        report::StepResult r;
        r.plan_step = slots->second;
        r.host = st.host;
        r.phase = "setup";
        r.verb = "ibv_reg_mr";
        r.object = q->slots->name();
        r.micros = timer.micros();
        st.report.add(std::move(r));
      }
    } catch (const verbs::VerbsError& e) {
      report::StepResult r;
      if (slots != slot_step.end()) r.plan_step = slots->second;
      r.host = st.host;
      r.phase = "setup";
      r.verb = e.verb();
      r.object = e.object();
      r.status = report::StepStatus::Failed;
      r.err = e.error();
      r.message = e.what();
      st.report.add(std::move(r));
      st.report.fail(e.what());
      st.qps.clear();  // no QP was made; teardown releases the buffers registered so far
      creates_.clear();
      return;
    }
    if (q->slots) published_.mrs.insert_or_assign(q->slots->name(), published_mr(st.host, *q->slots));
    RemoteQp* entry = &published_.qps.insert_or_assign(step.object, published_qp(*q)).first->second;
    if (q->spec->connect) by_peer_name_.emplace_back(q->spec->connect.name, static_cast<uint32_t>(creates_.size()));
    index_of[step.object] = static_cast<uint32_t>(creates_.size());
    const auto& spec = *q->spec;
    ibv_xrcd* xrcd = spec.xrcd ? st.xrcds.at(spec.xrcd.name)->get() : nullptr;
    creates_.push_back({&step, q, init, q->device->ctx().get(), xrcd, entry});
  }
  std::sort(by_peer_name_.begin(), by_peer_name_.end());
  peers_.assign(creates_.size(), nullptr);
  for (const auto& [name, m] : st.mrs) published_.mrs.insert_or_assign(name, published_mr(st.host, *m));
  int half = 0;
  for (const auto& step : plan.steps) {
    if (step.phase == plan::Phase::Exchange) half = 1;
    if (step.phase != plan::Phase::BringUp || step.stage >= 0) continue;  // a stage's (rdma_cm): the timeline runs it
    Op op{&step};
    op.kind = step.kind == plan::StepKind::Modify        ? OpKind::Modify
              : step.kind == plan::StepKind::PostRecv    ? OpKind::PostRecv
              : step.kind == plan::StepKind::PostSrqRecv ? OpKind::PostSrqRecv
                                                         : OpKind::Other;
    if (op.kind == OpKind::Modify || op.kind == OpKind::PostRecv) {
      auto it = index_of.find(step.object);
      if (it == index_of.end()) continue;  // not this host's (the planner only lists its own)
      op.qp = it->second;
      op.q = creates_[op.qp].q;
    }
    if (op.kind == OpKind::Modify) {
      op.transition = static_cast<size_t>(step.transition_index);
      const auto& t = op.q->spec->transitions[op.transition];
      op.quick = t.bring_up && t.predicted_ok && !(t.expect && t.expect->errno_value != 0);
      try {
        op.attrs = compile_attrs(*op.q, t);
      } catch (const std::exception& e) {
        op.error = e.what();
      }
    }
    halves_[half].push_back(std::move(op));
  }
}

void BringUpProgram::create_qps(RunState& st) {
  const Stops stop(st);
  size_t made = 0;
  for (auto& c : creates_) {
    if (!goes_on(st, stop)) break;
    st.report.current_step = c.step->index;  // a "device granted" line reports on the create
    StepTimer timer;
    int err = c.q->qp->create(c.ctx, c.q->pd, c.xrcd, c.init);
    double micros = timer.micros();
    if (err) {
      create_failed(st, c, err, micros);
      break;
    }
    lines_.created_ok(st, *c.step, micros);
    ++made;
    c.q->granted_cap = c.init.cap;
    c.published->qpn = c.q->qp->get()->qp_num;
    if (!same_caps(c.q->asked_cap, c.init.cap)) lines_.granted(st, *c.q);
  }
  // QPs never created have no place in the run (publish, traffic and teardown skip them).
  for (size_t i = made; i < creates_.size(); ++i) {
    if (creates_[i].q->slots) published_.mrs.erase(creates_[i].q->slots->name());
    st.qps.erase(creates_[i].step->object);
    published_.qps.erase(creates_[i].step->object);
  }
  creates_.resize(made);
}

void BringUpProgram::run_half(RunState& st, int half) {
  const Stops stop(st);
  static const std::string kPhase = "bring-up";
  if (half == 1) resolve_peers(st);
  for (const auto& op : halves_[half]) {
    if (!goes_on(st, stop)) return;
    st.report.current_step = op.step->index;
    if (op.kind != OpKind::Modify) {
      run_receives(st, op);
      continue;
    }
    if (!op.error.empty()) {
      attr_failure(st, kPhase, *op.q, op.transition, op.error);
      return;
    }
    ibv_qp_attr attr;
    try {
      op.attrs.resolve(*op.q, op.qp == kNoQp ? nullptr : peers_[op.qp], attr);
    } catch (const std::exception& e) {
      attr_failure(st, kPhase, *op.q, op.transition, e.what());
      return;
    }
    ModifyDone done;
    if (op.quick && quick_modify(st, op, attr, &done)) continue;
    apply_modify(st, kPhase, *op.q, op.transition, attr, &lines_, op.quick ? &done : nullptr);
  }
}

// Inside the window every INIT->RTR wakes a kernel worker, and under emulation (the lab's
// TCG guest) each switch to it and back throws away the translated-code lookups: what runs
// between two of them runs cold, so it pays per distinct piece of code rather than per
// instruction. Hence one short path for the case that happens thousands of times.
bool BringUpProgram::quick_modify(RunState& st, const Op& op, ibv_qp_attr& attr, ModifyDone* done) {
  QpState& q = *op.q;
  const auto& t = q.spec->transitions[op.transition];
  *done = timed_modify(q, t, attr);
  if (done->err != 0 || !reads_back(q, t, attr)) return false;
  q.state = t.to;
  lines_.modified_ok(st, q, op.transition, done->micros);
  return true;
}

void BringUpProgram::create_failed(RunState& st, const Create& c, int err, double micros) {
  verbs::VerbsError e(c.step->verb, c.step->object, err);
  st.report.fail(e.what());
  note_unsupported(st, err, e.what());
  lines_.created(st, *c.step, Outcome{report::StepStatus::Failed, err, micros, e.what()});
}

void BringUpProgram::run_receives(RunState& st, const Op& op) {
  const plan::Step& step = *op.step;
  const auto& s = *st.scenario;
  if (op.kind == OpKind::PostRecv && op.q) {
    uint32_t n = scenario::bringup_receives(s, *op.q->spec);  // fewer when scripts own the RQ
    run_step(st, st.host, "bring-up", step.verb, step.object, std::to_string(n) + " WRs",
             [&] { post_bringup_receives(st, *op.q, n); });
  } else if (op.kind == OpKind::PostSrqRecv) {
    const auto* sr = s.srq(step.object);
    uint32_t n = sr ? scenario::bringup_srq_receives(s, *sr) : 0;
    run_step(st, st.host, "bring-up", step.verb, step.object, std::to_string(n) + " WRs",
             [&] { post_srq_bringup_receives(st, step.object, n); });
  } else if (step.kind == plan::StepKind::ModifySrq) {
    arm_srq_limit(st, step, "bring-up");
  }
}

void BringUpProgram::resolve_peers(const RunState& st) {
  auto it = st.dir.qps.begin(), end = st.dir.qps.end();
  for (const auto& [name, index] : by_peer_name_) {
    while (it != end && std::string_view(it->first) < name) ++it;
    peers_[index] = it != end && it->first == name ? &it->second : nullptr;
  }
}

}  // namespace qpo::exec
