#pragma once
// The bring-up window - from the first ibv_create_qp to the last QP at RTS - run from the
// plan's bring-up schedule (plan/bringup_schedule.h: the creates, and each half's steps as
// chains per QP). Everything that can be done before the window is done in the setup walk:
// each QP's record, its ibv_qp_init_attr, its slot buffer and its directory entry (prepare, at
// its CreateQp step); each modify's attr template comes lowered from the plan
// (plan/modify_plan.h). Inside the window are the verbs, a copy and a few stores per attr, and
// report lines whose text is written after it closes (deferred_lines.h). bench/qp_rate.sh
// measures the window against a hand-written C loop making the same verbs.
//
// With more than one thread (set_threads) the QPs are shared out among them (QP i to thread
// i % n): each thread runs its QPs' creates and the common case of their modifies (predicted
// ok, reads back as set) ahead, and records only an outcome per step. The session's thread
// then walks the half's steps in plan order: it writes the lines of what ran ahead, judges a
// modify that did not go as planned (apply_modify, with the verb's result), and runs whatever
// was left (receives, SRQ steps, a QP after anything unusual) as a single thread would. The
// report's order is the plan's whatever the threads did; a QP's own steps keep their order.
#include <atomic>
#include <functional>
#include <string_view>
#include <utility>
#include <string>
#include <vector>

#include "exec/deferred_lines.h"
#include "exec/executor.h"
#include "exec/run_state.h"
#include "plan/plan.h"

namespace qpo::exec {

class BringUpRunner {
 public:
  // This host's plan, before its setup walk: room for the window's lines and owners.
  void begin(RunState& st, const plan::Plan& all, const plan::HostPlan& plan);
  // The setup walk's CreateQp step (in plan order; the objects the QP uses - PD, CQs, SRQ,
  // XRCD - exist already): the QP's record in st.qps with its owner and slot buffer
  // (make_qp_owner, the buffer's line at its RegSlots step), without a QP until create_qps
  // makes it, and its directory entry. A slot buffer that cannot be registered fails the run
  // (the step log) with a line naming it; no QP is prepared then.
  void prepare(RunState& st, report::RunReport& log, const plan::Step& create);
  // The window opens: the scenario's MRs join the directory.
  void open(RunState& st);
  bool opened() const { return opened_; }
  // Threads for the window's QP verbs (1: all on the caller's, in plan order). Fewer are
  // used on a host with few QPs (kQpsPerThread each at least).
  void set_threads(unsigned n) { threads_ = n == 0 ? 1 : n; }
  static constexpr size_t kQpsPerThread = 16;
  bool has_qps() const { return !creates_.empty(); }

  // ibv_create_qp for every QP, in plan order, while the run goes on (no failure, no
  // Ctrl-C; the session reports an interruption). A QP whose create failed or never ran
  // leaves st.qps; its owner stays empty and teardown skips it. With threads, QPs another
  // thread made past a failure exist, so they stay in the run.
  void create_qps(RunState& st, report::RunReport& log);

  // This host's directory for the exchange: assembled as the QPs are prepared, their numbers
  // filled in as they are created. Moves it out (call once).
  Directory publish() { return std::move(published_); }

  // The bring-up steps before (half 0) or after (half 1) the exchange, in plan order:
  // ibv_modify_qp with the lowered attrs, the initial receives.
  void run_half(RunState& st, report::RunReport& log, int half);

  // Call once the window has closed (whatever happened in it): names the lines the window
  // left without text, each in its plan step's place.
  void name_lines(RunState& st, report::RunReport& log) { lines_.name_all(st, log); }
  // The latest plan step of the lines not named yet (0: none).
  int unnamed_latest_step() const { return lines_.latest_step(); }

 private:
  struct Create {
    const plan::Step* step;
    QpState* q;
    ibv_qp_init_attr init;         // the request; the create writes the granted caps into it
    ibv_context* ctx;
    ibv_xrcd* xrcd;
    RemoteQp* published;           // its entry in published_
  };
  static constexpr uint32_t kNoQp = plan::BringUpSchedule::kNone;
  using Half = plan::BringUpSchedule::Half;
  const plan::Step& step_at(const Half& h, uint32_t entry) const { return plan_->steps[h.steps[entry]]; }
  // The QP of a half's entry (nullptr: an SRQ's step, or its QP was never created).
  QpState* qp_at(const Half& h, uint32_t entry) const {
    return h.chain[entry] == kNoQp ? nullptr : creates_[h.chain[entry]].q;
  }

  // What a thread did with one step ahead of the walk (run_ahead).
  struct Ahead {
    enum class State : unsigned char { NotRun, Done, Tried } state = State::NotRun;
    ModifyDone done;  // Done: as planned; Tried: the verb ran and apply_modify must judge it
  };
  unsigned workers() const;
  // One create's result (err < 0: it did not run).
  struct Made {
    int err = -1;
    double micros = 0;
  };
  // Thread w's share of the creates (made[i] for creates_[i]), each QP's steps before the
  // exchange right after its create.
  void create_share(unsigned w, unsigned n, std::vector<Made>& made);
  // ibv_create_qp of creates_[i], its result into `made`; false when it failed.
  bool create_one(size_t i, Made& made);
  // QP qp's steps of a half, ahead of the walk, into ahead_[half]. A step it cannot run
  // (or that did not go as planned) leaves the QP to the walk from there on: blocked_[qp].
  void run_qp_ahead(int half, uint32_t qp);
  // Every QP's steps of a half on the threads (unless the creates ran them already).
  void run_ahead(RunState& st, report::RunReport& log, int half);
  // Whether a thread may go on: no Ctrl-C, no stop from the channel, no failed create (when
  // `creating`) or failed modify (else). A failed modify does not stop the creates: the walk
  // needs every QP before it to exist when it gets there.
  bool threads_go_on(bool creating) const;
  // Runs body(w) for w in [0, n): w 0 on this thread, the others on their own; the share of a
  // thread that cannot start runs on this thread after w 0.
  template <typename Body>
  void on_threads(unsigned n, Body body);
  void run_receives(RunState& st, report::RunReport& log, const plan::Step& step, QpState* q);
  void create_failed(RunState& st, report::RunReport& log, const Create& c, int err, double micros);
  // The bring-up's common case in as little code as possible: the modify succeeds and the
  // QP reads back in its new state with what was set. False (with the verb's result in
  // `done`) hands anything else to apply_modify's full judgement.
  bool quick_modify(report::RunReport& log, const plan::Step& step, QpState& q, ibv_qp_attr& attr, ModifyDone* done);
  // quick_modify without the line (a thread's): the verb, the read-back, the QP's new state.
  bool modified_as_planned(const plan::Step& step, QpState& q, ibv_qp_attr& attr, ModifyDone* done);
  // Each QP's peer in the exchanged directory: one walk in id order, no lookups.
  void resolve_peers(const RunState& st);

  const plan::Plan* all_ = nullptr;
  const plan::HostPlan* plan_ = nullptr;
  std::vector<Create> creates_;
  Directory published_;
  // QPs with a connect:, by the peer's id (sorted before the window), and what it resolved to.
  std::vector<std::pair<plan::ObjectId, uint32_t>> by_peer_;
  std::vector<const RemoteQp*> peers_;
  DeferredLines lines_;
  bool opened_ = false;
  unsigned threads_ = 1;
  // Set by a thread whose verb failed: the others stop at their next step of that kind.
  std::atomic<bool> create_failed_{false}, modify_failed_{false};
  std::string thread_error_;  // what escaped a thread's body (ThreadGroup kept it)
  const StopRequest* channel_stop_ = nullptr;
  std::vector<Ahead> ahead_[2];  // empty: nothing ran ahead (one thread)
  // Per QP, written by its own thread only: the walk runs its steps from here on.
  std::vector<char> blocked_;
};

}  // namespace qpo::exec
