#include "exec/bringup_program.h"

#include <algorithm>
#include <atomic>
#include <map>

#include "exec/endpoints.h"
#include "exec/steps.h"
#include "util/thread_group.h"

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

void BringUpProgram::compile(RunState& st, const plan::Plan& all, const plan::HostPlan& plan) {
  compiled_ = true;
  size_t steps = plan.steps.size();
  lines_.reserve(steps * 2);           // a create may add a "device granted" line
  st.owned.reserve(st.owned.size() + steps * 2);  // a QP and its slot buffer
  std::vector<uint32_t> index_of(all.qp_count(), kNoQp);  // QP id -> its index in creates_
  std::map<std::string, const plan::Step*> slot_step;  // "qpo.slots.qa" -> its plan step
  for (const auto& step : plan.steps)
    if (step.kind == plan::StepKind::RegSlots) slot_step[step.object] = &step;
  for (const auto& step : plan.steps) {
    if (step.phase != plan::Phase::Setup || !is_create(step)) continue;
    ibv_qp_init_attr init{};
    auto slots = slot_step.find("qpo.slots." + step.object);
    QpState qs = prepare_qp(st, step, &init, slots != slot_step.end() ? slots->second->count : 0);
    qs.ordinal = static_cast<uint32_t>(st.qps.made());
    qs.id = step.id;
    QpState* q = &st.qps.put(step.id, std::move(qs));
    try {
      StepTimer timer;
      make_qp_owner(st, *q);
      if (q->slots) {
        report::StepResult r;
        r.plan_step = slots->second->index;
        r.host = st.host;
        r.phase = "setup";
        r.verb = "ibv_reg_mr";
        r.object = q->slots->name();
        r.micros = timer.micros();
        st.report.add(std::move(r));
      }
    } catch (const verbs::VerbsError& e) {
      report::StepResult r;
      if (slots != slot_step.end()) r.plan_step = slots->second->index;
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
    index_of.at(step.id) = static_cast<uint32_t>(creates_.size());
    const auto& spec = *q->spec;
    ibv_xrcd* xrcd = spec.xrcd ? st.xrcds.at(all.id_of(plan::ObjectKind::Xrcd, spec.xrcd.name))->get() : nullptr;
    creates_.push_back({&step, q, init, q->device->ctx().get(), xrcd, entry});
  }
  std::sort(by_peer_name_.begin(), by_peer_name_.end());
  peers_.assign(creates_.size(), nullptr);
  st.mrs.for_each([&](plan::ObjectId, const verbs::Mr* m) { published_.mrs.insert_or_assign(m->name(), published_mr(st.host, *m)); });
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
      op.qp = step.id < index_of.size() ? index_of[step.id] : kNoQp;
      if (op.qp == kNoQp) continue;  // not this host's (the planner only lists its own)
      op.q = creates_[op.qp].q;
    }
    if (op.kind == OpKind::Modify) {
      op.modify = &all.modify_of(step);
    }
    halves_[half].push_back(std::move(op));
  }
  for (int h = 0; h < 2; ++h) {  // each QP's steps of each half, in plan order (CSR)
    auto& start = qp_ops_[h].start;
    start.assign(creates_.size() + 1, 0);
    for (const auto& op : halves_[h])
      if (op.qp != kNoQp) ++start[op.qp + 1];
    for (size_t i = 1; i < start.size(); ++i) start[i] += start[i - 1];
    qp_ops_[h].ops.resize(start.back());
    std::vector<uint32_t> next(start.begin(), start.end() - 1);
    for (uint32_t i = 0; i < halves_[h].size(); ++i)
      if (halves_[h][i].qp != kNoQp) qp_ops_[h].ops[next[halves_[h][i].qp]++] = i;
  }
}

unsigned BringUpProgram::workers() const {
  size_t by_size = creates_.size() / kQpsPerThread;
  return static_cast<unsigned>(std::max<size_t>(1, std::min<size_t>(threads_, by_size)));
}

bool BringUpProgram::threads_go_on(bool creating) const {
  const auto& failed = creating ? create_failed_ : modify_failed_;
  return !stop_flag().load(std::memory_order_relaxed) && !failed.load(std::memory_order_relaxed) &&
         !(channel_stop_ && channel_stop_->requested.load(std::memory_order_relaxed));
}

template <typename Body>
void BringUpProgram::on_threads(unsigned n, Body body) {
  util::ThreadGroup group;
  unsigned started = 1;
  for (; started < n; ++started)
    if (group.start([&body, w = started] { body(w); })) break;
  body(0);
  for (unsigned w = started; w < n; ++w) body(w);  // the shares of threads that could not start
  group.join();
  if (std::string why = group.escaped(); !why.empty() && thread_error_.empty()) thread_error_ = why;
}

bool BringUpProgram::create_one(size_t i, Made& made) {
  auto& c = creates_[i];
  StepTimer timer;
  int err = c.q->qp->create(c.ctx, c.q->pd, c.xrcd, c.init);
  made = {err, timer.micros()};
  if (err) return false;
  c.q->granted_cap = c.init.cap;
  c.published->qpn = c.q->qp->get()->qp_num;
  return true;
}

void BringUpProgram::create_share(unsigned w, unsigned n, std::vector<Made>& made) {
  for (size_t i = w; i < creates_.size(); i += n) {
    if (!threads_go_on(true)) return;
    if (!create_one(i, made[i])) {
      create_failed_.store(true, std::memory_order_relaxed);  // the other threads stop creating
      return;
    }
    // Its steps before the exchange need nothing else: while this thread runs them, the
    // others' creates go on (a create is mostly the kernel mapping queues, one at a time).
    run_qp_ahead(0, static_cast<uint32_t>(i));
  }
}

void BringUpProgram::create_qps(RunState& st) {
  channel_stop_ = st.channel ? st.channel->stop_request() : nullptr;
  std::vector<Made> made(creates_.size());
  unsigned n = workers();
  if (n > 1) {
    ahead_[0].assign(halves_[0].size(), Ahead{});
    blocked_.assign(creates_.size(), 0);
    on_threads(n, [&](unsigned w) { create_share(w, n, made); });
  } else {
    const Stops stop(st);
    for (size_t i = 0; i < creates_.size() && goes_on(st, stop); ++i)
      if (!create_one(i, made[i])) break;
  }
  // The lines, in plan order: what was made, then the first failure (one thread stops the
  // others, which may have made QPs past it: they exist, so they stay in the run).
  bool failed = false;
  for (size_t i = 0; i < creates_.size(); ++i) {
    auto& c = creates_[i];
    if (made[i].err < 0) continue;
    st.report.current_step = c.step->index;  // a "device granted" line reports on the create
    if (made[i].err > 0) {
      if (!failed) create_failed(st, c, made[i].err, made[i].micros);
      failed = true;
      continue;
    }
    lines_.created_ok(st, *c.step, made[i].micros);
    if (!same_caps(c.q->asked_cap, c.init.cap)) lines_.granted(st, *c.q);
  }
  // QPs never created have no place in the run (publish, traffic and teardown skip them).
  // The run has failed then, so no step of theirs runs (run_half stops first).
  for (size_t i = 0; i < creates_.size(); ++i) {
    if (made[i].err == 0) continue;
    if (creates_[i].q->slots) published_.mrs.erase(creates_[i].q->slots->name());
    st.qps.erase(creates_[i].step->id);
    published_.qps.erase(creates_[i].step->object);
    creates_[i].q = nullptr;
  }
  for (auto& half : halves_)  // their steps never run: no step points at a QP that is gone
    for (auto& op : half)
      if (op.qp != kNoQp && !creates_[op.qp].q) op.q = nullptr;
  if (!thread_error_.empty()) st.report.fail("bring-up thread: " + thread_error_);
}

void BringUpProgram::run_qp_ahead(int half, uint32_t qp) {
  const auto& ops = halves_[half];
  const auto& index = qp_ops_[half];
  for (uint32_t k = index.start[qp]; k < index.start[qp + 1] && !blocked_[qp]; ++k) {
    uint32_t i = index.ops[k];
    const Op& op = ops[i];
    if (!threads_go_on(false)) return;
    if (op.kind != OpKind::Modify || !op.modify->quick() || !op.modify->attrs.error.empty()) {
      blocked_[qp] = 1;  // a receive, or a modify that needs judging: the walk's
      return;
    }
    ibv_qp_attr attr;
    try {
      op.modify->attrs.resolve(own_values(*op.q), peers_[qp], op.q->spec->name, attr);
    } catch (const std::exception&) {
      blocked_[qp] = 1;  // the walk reports why
      return;
    }
    ModifyDone done;
    if (modified_as_planned(op, attr, &done)) {
      ahead_[half][i] = {Ahead::State::Done, done};
      continue;
    }
    ahead_[half][i] = {Ahead::State::Tried, done};
    blocked_[qp] = 1;
    if (done.err) modify_failed_.store(true, std::memory_order_relaxed);  // creates go on: the walk needs them
  }
}

void BringUpProgram::run_ahead(RunState& st, int half) {
  unsigned n = workers();
  if (n < 2 || ahead_[half].size() == halves_[half].size()) return;  // one thread, or run with the creates
  channel_stop_ = st.channel ? st.channel->stop_request() : nullptr;
  ahead_[half].assign(halves_[half].size(), Ahead{});
  blocked_.assign(creates_.size(), 0);  // the walk ran every step of the half before
  modify_failed_.store(false, std::memory_order_relaxed);
  on_threads(n, [&](unsigned w) {
    for (size_t qp = w; qp < creates_.size(); qp += n) run_qp_ahead(half, static_cast<uint32_t>(qp));
  });
  if (!thread_error_.empty()) st.report.fail("bring-up thread: " + thread_error_);
}

void BringUpProgram::run_half(RunState& st, int half) {
  const Stops stop(st);
  static const std::string kPhase = "bring-up";
  if (!goes_on(st, stop) && ahead_[half].empty()) return;  // what ran ahead is reported in any case
  if (half == 1 && goes_on(st, stop)) resolve_peers(st);
  const auto& ops = halves_[half];
  run_ahead(st, half);
  const std::vector<Ahead>& ahead = ahead_[half];
  for (size_t i = 0; i < ops.size(); ++i) {
    const Op& op = ops[i];
    if (op.qp != kNoQp && !op.q) continue;  // its QP was never created (the run has failed)
    st.report.current_step = op.step->index;
    // What a thread ran ahead gets its line even after a stop: it happened.
    Ahead::State ran = ahead.empty() ? Ahead::State::NotRun : ahead[i].state;
    if (ran == Ahead::State::Done) {
      lines_.modified_ok(st, *op.q, *op.modify, ahead[i].done.micros);
      continue;
    }
    if (ran == Ahead::State::NotRun && !goes_on(st, stop)) {
      if (ahead.empty()) return;
      continue;
    }
    if (op.kind != OpKind::Modify) {
      run_receives(st, op);
      continue;
    }
    if (!op.modify->attrs.error.empty()) {
      attr_failure(st, kPhase, *op.q, *op.modify, op.modify->attrs.error);
      continue;
    }
    ibv_qp_attr attr;
    try {
      op.modify->attrs.resolve(own_values(*op.q), op.qp == kNoQp ? nullptr : peers_[op.qp], op.q->spec->name, attr);
    } catch (const std::exception& e) {
      attr_failure(st, kPhase, *op.q, *op.modify, e.what());
      continue;
    }
    if (ran == Ahead::State::Tried) {  // the verb ran on a thread; judge it, do not repeat it
      apply_modify(st, kPhase, *op.q, *op.modify, attr, &lines_, &ahead[i].done);
      continue;
    }
    ModifyDone done;
    if (op.modify->quick() && quick_modify(st, op, attr, &done)) continue;
    apply_modify(st, kPhase, *op.q, *op.modify, attr, &lines_, op.modify->quick() ? &done : nullptr);
  }
}

// Inside the window every INIT->RTR wakes a kernel worker, and under emulation (the lab's
// TCG guest) each switch to it and back throws away the translated-code lookups: what runs
// between two of them runs cold, so it pays per distinct piece of code rather than per
// instruction. Hence one short path for the case that happens thousands of times.
bool BringUpProgram::modified_as_planned(const Op& op, ibv_qp_attr& attr, ModifyDone* done) {
  QpState& q = *op.q;
  const auto& t = *op.modify;
  *done = timed_modify(q, op.step->mask, attr);
  if (done->err != 0 || !reads_back(q, t, attr)) return false;
  q.state = t.to;
  return true;
}

bool BringUpProgram::quick_modify(RunState& st, const Op& op, ibv_qp_attr& attr, ModifyDone* done) {
  if (!modified_as_planned(op, attr, done)) return false;
  lines_.modified_ok(st, *op.q, *op.modify, done->micros);
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
  uint32_t n = step.count;  // fewer than the queue holds when scripts own it (scenario/script_qps.h)
  if (op.kind == OpKind::PostRecv && op.q) {
    run_step(st, st.host, "bring-up", step.verb, step.object, std::to_string(n) + " WRs",
             [&] { post_bringup_receives(*op.q, n); });
  } else if (op.kind == OpKind::PostSrqRecv) {
    run_step(st, st.host, "bring-up", step.verb, step.object, std::to_string(n) + " WRs",
             [&] { post_srq_bringup_receives(st, step.id, step.object, n); });
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
