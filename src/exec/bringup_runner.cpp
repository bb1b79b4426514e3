#include "exec/bringup_runner.h"

#include <algorithm>
#include <atomic>

#include "exec/endpoints.h"
#include "exec/directory_names.h"
#include "exec/steps.h"
#include "util/thread_group.h"

namespace qpo::exec {

namespace {

// What stops the window between two verbs: Ctrl-C, and the channel telling this host to
// stop (another host waited for it past --phase-timeout). Read once per loop.
struct Stops {
  const std::atomic<bool>& interrupt;
  const StopRequest* channel;
  explicit Stops(const RunState& st)
      : interrupt(stop_flag()), channel(st.channel ? st.channel->stop_request() : nullptr) {}
};

// Whether the next step may run: checked before every verb, so no std::function and no
// call into the session; HostSession turns a stop into the run's verdict afterwards.
bool goes_on(const report::RunReport& log, const Stops& stops) {
  return log.verdict == report::Verdict::Pass && !stops.interrupt.load(std::memory_order_relaxed) &&
         !(stops.channel && stops.channel->requested.load(std::memory_order_relaxed));
}

}  // namespace

void BringUpRunner::begin(RunState& st, const plan::Plan& all, const plan::HostPlan& plan) {
  all_ = &all;
  plan_ = &plan;
  size_t steps = plan.steps.size();
  lines_.reserve(steps * 2);                      // a create may add a "device granted" line
  st.owned.reserve(st.owned.size() + steps * 2);  // a QP and its slot buffer
  creates_.reserve(plan.bringup.creates.size());
  peers_.assign(plan.bringup.creates.size(), nullptr);
}

void BringUpRunner::prepare(RunState& st, report::RunReport& log, const plan::Step& step) {
  const auto& schedule = plan_->bringup;
  const size_t chain = creates_.size();  // prepared in plan order: its number in the schedule
  if (chain >= schedule.creates.size() || schedule.creates[chain] != static_cast<uint32_t>(step.index - 1)) {
    log.fail("plan step " + std::to_string(step.index) + " (" + step.verb.str() + " " + step.object +
                   ") is not the next create of the plan's bring-up schedule");
    return;
  }
  uint32_t slots_at = schedule.slots[chain];
  const plan::Step* slots = slots_at == kNoQp ? nullptr : &plan_->steps[slots_at];
  ibv_qp_init_attr init{};
  QpState qs = prepare_qp(st, step, &init, slots ? slots->count : 0);
  qs.ordinal = static_cast<uint32_t>(st.qps.made());
  qs.id = step.id;
  QpState* q = &st.qps.put(step.id, std::move(qs));
  try {
    StepTimer timer;
    make_qp_owner(st, *q);
    if (q->slots) {
      report::StepResult r;
      r.plan_step = slots->index;
      r.host = st.host;
      r.phase = "setup";
      r.verb = "ibv_reg_mr";
      r.object = q->slots->name();
      r.micros = timer.micros();
      log.add(std::move(r));
    }
  } catch (const verbs::VerbsError& e) {
    report::StepResult r;
    if (slots) r.plan_step = slots->index;
    r.host = st.host;
    r.phase = "setup";
    r.verb = e.verb();
    r.object = e.object();
    r.status = report::StepStatus::Failed;
    r.err = e.error();
    r.message = e.what();
    log.add(std::move(r));
    log.fail(e.what());
    st.qps.clear();  // no QP was made; teardown releases the buffers registered so far
    creates_.clear();
    return;
  }
  if (q->slots) published_.mrs.insert_or_assign(slots_key(step.id), published_mr(st.host, *q->slots));
  RemoteQp* entry = &published_.qps.insert_or_assign(step.id, published_qp(*q)).first->second;
  if (q->facts->peer != plan::kNoObject) by_peer_.emplace_back(q->facts->peer, static_cast<uint32_t>(chain));
  ibv_xrcd* xrcd = q->facts->xrcd != plan::kNoObject ? st.xrcds.at(q->facts->xrcd)->get() : nullptr;
  creates_.push_back({&step, q, init, q->device->ctx().get(), xrcd, entry});
}

void BringUpRunner::open(RunState& st) {
  opened_ = true;
  std::sort(by_peer_.begin(), by_peer_.end());
  st.mrs.for_each([&](plan::ObjectId id, const verbs::Mr* m) {
    published_.mrs.insert_or_assign(MrKey{MrKey::Kind::Mr, id}, published_mr(st.host, *m));
  });
}

unsigned BringUpRunner::workers() const {
  size_t by_size = creates_.size() / kQpsPerThread;
  return static_cast<unsigned>(std::max<size_t>(1, std::min<size_t>(threads_, by_size)));
}

bool BringUpRunner::threads_go_on(bool creating) const {
  const auto& failed = creating ? create_failed_ : modify_failed_;
  return !stop_flag().load(std::memory_order_relaxed) && !failed.load(std::memory_order_relaxed) &&
         !(channel_stop_ && channel_stop_->requested.load(std::memory_order_relaxed));
}

template <typename Body>
void BringUpRunner::on_threads(unsigned n, Body body) {
  util::ThreadGroup group;
  unsigned started = 1;
  for (; started < n; ++started)
    if (group.start([&body, w = started] { body(w); })) break;
  body(0);
  for (unsigned w = started; w < n; ++w) body(w);  // the shares of threads that could not start
  group.join();
  if (std::string why = group.escaped(); !why.empty() && thread_error_.empty()) thread_error_ = why;
}

bool BringUpRunner::create_one(size_t i, Made& made) {
  auto& c = creates_[i];
  StepTimer timer;
  int err = c.q->qp->create(c.ctx, c.q->pd, c.xrcd, c.init);
  made = {err, timer.micros()};
  if (err) return false;
  c.q->granted_cap = c.init.cap;
  c.published->qpn = c.q->qp->get()->qp_num;
  return true;
}

void BringUpRunner::create_share(unsigned w, unsigned n, std::vector<Made>& made) {
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

void BringUpRunner::create_qps(RunState& st, report::RunReport& log) {
  channel_stop_ = st.channel ? st.channel->stop_request() : nullptr;
  std::vector<Made> made(creates_.size());
  unsigned n = workers();
  if (n > 1) {
    ahead_[0].assign(plan_->bringup.halves[0].steps.size(), Ahead{});
    blocked_.assign(creates_.size(), 0);
    on_threads(n, [&](unsigned w) { create_share(w, n, made); });
  } else {
    const Stops stop(st);
    for (size_t i = 0; i < creates_.size() && goes_on(log, stop); ++i)
      if (!create_one(i, made[i])) break;
  }
  // The lines, in plan order: what was made, then the first failure (one thread stops the
  // others, which may have made QPs past it: they exist, so they stay in the run).
  bool failed = false;
  for (size_t i = 0; i < creates_.size(); ++i) {
    auto& c = creates_[i];
    if (made[i].err < 0) continue;
    log.current_step = c.step->index;  // a "device granted" line reports on the create
    if (made[i].err > 0) {
      if (!failed) create_failed(st, log, c, made[i].err, made[i].micros);
      failed = true;
      continue;
    }
    lines_.created_ok(log, *c.step, made[i].micros);
    if (!same_caps(c.q->asked_cap, c.init.cap)) lines_.granted(log, *c.q);
  }
  // QPs never created have no place in the run (publish, traffic and teardown skip them).
  // The run has failed then, so no step of theirs runs (run_half stops first).
  for (size_t i = 0; i < creates_.size(); ++i) {
    if (made[i].err == 0) continue;
    if (creates_[i].q->slots) published_.mrs.erase(slots_key(creates_[i].step->id));
    st.qps.erase(creates_[i].step->id);
    published_.qps.erase(creates_[i].step->id);
    creates_[i].q = nullptr;
  }
  // Their steps never run: qp_at finds no QP for them.
  if (!thread_error_.empty()) log.fail("bring-up thread: " + thread_error_);
}

void BringUpRunner::run_qp_ahead(int half, uint32_t qp) {
  const Half& h = plan_->bringup.halves[half];
  QpState* q = creates_[qp].q;
  for (uint32_t k = h.first[qp]; k < h.first[qp + 1] && !blocked_[qp]; ++k) {
    uint32_t i = h.by_qp[k];
    const plan::Step& step = step_at(h, i);
    if (!threads_go_on(false)) return;
    const plan::ModifyPlan* m = step.kind == plan::StepKind::Modify ? &all_->modify_of(step) : nullptr;
    if (!m || !m->quick() || !m->attrs.error.empty()) {
      blocked_[qp] = 1;  // a receive, or a modify that needs judging: the walk's
      return;
    }
    ibv_qp_attr attr;
    try {
      m->attrs.resolve(own_values(*q), peers_[qp], q->facts->name, attr);
    } catch (const std::exception&) {
      blocked_[qp] = 1;  // the walk reports why
      return;
    }
    ModifyDone done;
    if (modified_as_planned(step, *q, attr, &done)) {
      ahead_[half][i] = {Ahead::State::Done, done};
      continue;
    }
    ahead_[half][i] = {Ahead::State::Tried, done};
    blocked_[qp] = 1;
    if (done.err) modify_failed_.store(true, std::memory_order_relaxed);  // creates go on: the walk needs them
  }
}

void BringUpRunner::run_ahead(RunState& st, report::RunReport& log, int half) {
  unsigned n = workers();
  size_t steps = plan_->bringup.halves[half].steps.size();
  if (n < 2 || ahead_[half].size() == steps) return;  // one thread, or run with the creates
  channel_stop_ = st.channel ? st.channel->stop_request() : nullptr;
  ahead_[half].assign(steps, Ahead{});
  blocked_.assign(creates_.size(), 0);  // the walk ran every step of the half before
  modify_failed_.store(false, std::memory_order_relaxed);
  on_threads(n, [&](unsigned w) {
    for (size_t qp = w; qp < creates_.size(); qp += n)
      if (creates_[qp].q) run_qp_ahead(half, static_cast<uint32_t>(qp));
  });
  if (!thread_error_.empty()) log.fail("bring-up thread: " + thread_error_);
}

void BringUpRunner::run_half(RunState& st, report::RunReport& log, int half) {
  const Stops stop(st);
  static const std::string kPhase = "bring-up";
  if (!goes_on(log, stop) && ahead_[half].empty()) return;  // what ran ahead is reported in any case
  if (half == 1 && goes_on(log, stop)) resolve_peers(st);
  const Half& h = plan_->bringup.halves[half];
  run_ahead(st, log, half);
  const std::vector<Ahead>& ahead = ahead_[half];
  for (uint32_t i = 0; i < h.steps.size(); ++i) {
    const plan::Step& step = step_at(h, i);
    QpState* q = qp_at(h, i);
    if (h.chain[i] != kNoQp && !q) continue;  // its QP was never created (the run has failed)
    log.current_step = step.index;
    const plan::ModifyPlan* m = step.kind == plan::StepKind::Modify ? &all_->modify_of(step) : nullptr;
    // What a thread ran ahead gets its line even after a stop: it happened.
    Ahead::State ran = ahead.empty() ? Ahead::State::NotRun : ahead[i].state;
    if (ran == Ahead::State::Done) {
      lines_.modified_ok(log, *q, *m, ahead[i].done.micros);
      continue;
    }
    if (ran == Ahead::State::NotRun && !goes_on(log, stop)) {
      if (ahead.empty()) return;
      continue;
    }
    if (!m) {
      run_receives(st, log, step, q);
      continue;
    }
    if (!m->attrs.error.empty()) {
      attr_failure(st, log, kPhase, *q, *m, m->attrs.error);
      continue;
    }
    ibv_qp_attr attr;
    try {
      m->attrs.resolve(own_values(*q), peers_[h.chain[i]], q->facts->name, attr);
    } catch (const std::exception& e) {
      attr_failure(st, log, kPhase, *q, *m, e.what());
      continue;
    }
    if (ran == Ahead::State::Tried) {  // the verb ran on a thread; judge it, do not repeat it
      apply_modify(st, log, kPhase, *q, *m, attr, &lines_, &ahead[i].done);
      continue;
    }
    ModifyDone done;
    if (m->quick() && quick_modify(log, step, *q, attr, &done)) continue;
    apply_modify(st, log, kPhase, *q, *m, attr, &lines_, m->quick() ? &done : nullptr);
  }
}

// Inside the window every INIT->RTR wakes a kernel worker, and under emulation (the lab's
// TCG guest) each switch to it and back throws away the translated-code lookups: what runs
// between two of them runs cold, so it pays per distinct piece of code rather than per
// instruction. Hence one short path for the case that happens thousands of times.
bool BringUpRunner::modified_as_planned(const plan::Step& step, QpState& q, ibv_qp_attr& attr, ModifyDone* done) {
  const auto& t = all_->modify_of(step);
  *done = timed_modify(q, step.mask, attr);
  if (done->err != 0 || !reads_back(q, t, attr)) return false;
  q.state = t.to;
  return true;
}

bool BringUpRunner::quick_modify(report::RunReport& log, const plan::Step& step, QpState& q, ibv_qp_attr& attr, ModifyDone* done) {
  if (!modified_as_planned(step, q, attr, done)) return false;
  lines_.modified_ok(log, q, all_->modify_of(step), done->micros);
  return true;
}

void BringUpRunner::create_failed(RunState& st, report::RunReport& log, const Create& c, int err, double micros) {
  verbs::VerbsError e(c.step->verb, c.step->object, err);
  log.fail(e.what());
  note_unsupported(st, log, err, e.what());
  lines_.created(log, *c.step, Outcome{report::StepStatus::Failed, err, micros, e.what()});
}

void BringUpRunner::run_receives(RunState& st, report::RunReport& log, const plan::Step& step, QpState* q) {
  uint32_t n = step.count;  // fewer than the queue holds when scripts own it (scenario/script_qps.h)
  if (step.kind == plan::StepKind::PostRecv && q) {
    run_step(log, st.host, "bring-up", step.verb, step.object, std::to_string(n) + " WRs",
             [&] { post_bringup_receives(*q, n); });
  } else if (step.kind == plan::StepKind::PostSrqRecv) {
    run_step(log, st.host, "bring-up", step.verb, step.object, std::to_string(n) + " WRs",
             [&] { post_srq_bringup_receives(st, step.id, step.object, n); });
  } else if (step.kind == plan::StepKind::ModifySrq) {
    arm_srq_limit(st, log, step, "bring-up");
  }
}

void BringUpRunner::resolve_peers(const RunState& st) {
  auto it = st.dir.qps.begin(), end = st.dir.qps.end();
  for (const auto& [peer, index] : by_peer_) {
    while (it != end && it->first < peer) ++it;
    peers_[index] = it != end && it->first == peer ? &it->second : nullptr;
  }
}

}  // namespace qpo::exec
