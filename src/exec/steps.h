#pragma once
// The executor's building blocks, shared by its translation units (not a public API).
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "exec/executor.h"
#include "dataplane/clock.h"
#include "exec/run_state.h"
#include "verbs/verbs_error.h"

namespace qpo::exec {

// Times one step with the TSC, like the data path: on the lab guest (and any VM whose
// clocksource is HPET) steady_clock::now() is a trapping syscall, and two of them per verb
// cost more than a fast ibv_modify_qp. The tick rate is calibrated once, before the first
// session starts (HostSession's constructor), never inside a timed window.
class StepTimer {
 public:
  StepTimer() : start_(dataplane::clock::ticks()) {}
  // A thread that moved to a CPU whose TSC lags reads an end before the start: 0, not 2^64.
  double micros() const {
    uint64_t end = dataplane::clock::ticks();
    return end > start_ ? dataplane::clock::to_us(end - start_) : 0.0;
  }

 private:
  uint64_t start_;
};

// How one step ended, before it becomes a report line.
struct Outcome {
  report::StepStatus status = report::StepStatus::Ok;
  int err = 0;
  double micros = 0;
  std::string message;
};

// A report line takes a step's outcome.
inline void set_outcome(report::StepResult& r, Outcome&& o) {
  r.status = o.status;
  r.err = o.err;
  r.micros = o.micros;
  r.message = std::move(o.message);
}

// Runs fn() timed; a VerbsError or another exception becomes a failed Outcome and fails the
// run (the message names the verb and object when the error does not). run_step's core.
template <typename Fn>
Outcome timed_step(report::RunReport& log, const std::string& verb, const std::string& object, Fn&& fn) {
  Outcome r;
  StepTimer timer;
  try {
    fn();
  } catch (const verbs::VerbsError& e) {
    r.status = report::StepStatus::Failed;
    r.err = e.error();
    r.message = e.what();
    log.fail(e.what());
  } catch (const std::exception& e) {
    r.status = report::StepStatus::Failed;
    r.message = e.what();
    log.fail(verb + "(" + object + "): " + e.what());
  }
  r.micros = timer.micros();
  return r;
}

// Runs one step, times it, turns a VerbsError into a failed StepResult. Returns the result.
report::StepResult& run_step(report::RunReport& log, const std::string& host, const std::string& phase, const std::string& verb,
                             const std::string& object, const std::string& detail, const std::function<void()>& fn);

// Setup (setup.cpp)
void open_device(RunState& st, const plan::DeviceFacts& d, plan::ObjectId id);
void create_object(RunState& st, const plan::Step& step);  // alloc_pd, reg_mr, create_cq/srq, open_xrcd, an SRQ's slots
// A QP's record and ibv_qp_init_attr from the scenario, without a verb: everything the
// create needs is resolved before the bring-up window (the PDs, CQs, SRQs, XRCDs exist).
// `slot_bytes`: the plan registers a slot buffer for it (plan::StepKind::RegSlots), of slots this
// big; 0: none.
QpState prepare_qp(RunState& st, const plan::Step& create, ibv_qp_init_attr* init, uint32_t slot_bytes);
// A prepared QP's owner, still without a QP (verbs::Qp::create makes it in the bring-up
// window), and its receive/send slot buffer when it needs one (ibv_reg_mr now: the window
// holds QP verbs only). Throws VerbsError when the registration fails.
void make_qp_owner(RunState& st, QpState& q);
// A failed create whose errno means "this device cannot": the run's verdict becomes Unsupported.
void note_unsupported(RunState& st, report::RunReport& log, int err, const std::string& message);

// Capabilities (capabilities.cpp): empty string when supported, else the reason.
std::string unsupported_reason(const RunState& st, const plan::DeviceNeeds& needs);  // the plan's needs
std::string provider_of(const RunState& st);

// ibv_modify_qp (modify.cpp) with the attr the planner lowered for the step. Returns false
// when the run must stop.
bool modify_qp(RunState& st, report::RunReport& log, const std::string& phase, QpState& q, const plan::ModifyPlan& m);
// What a lowered attr takes from the QP itself: its port, GID index, port MTU and sq_psn.
plan::OwnValues own_values(const QpState& q);
// The same with the attr already resolved (the bring-up runner's). With `later`, the report
// line is named after the bring-up window (deferred_lines.h). With `done`, ibv_modify_qp was
// already called (the bring-up runner's quick path, or a thread's) and this only judges its
// result: the verb runs once whatever happens.
class DeferredLines;
struct ModifyDone {
  int err = 0;
  double micros = 0;
};
bool apply_modify(RunState& st, report::RunReport& log, const std::string& phase, QpState& q, const plan::ModifyPlan& m, ibv_qp_attr& attr,
                  DeferredLines* later, const ModifyDone* done = nullptr);
// ibv_modify_qp with the step's planned mask, timed.
ModifyDone timed_modify(QpState& q, spec::Mask mask, ibv_qp_attr& attr);
// ibv_query_qp after a successful modify: false when the state is not the target (or the
// query failed); attributes set that read back differently go to `differs` (devices may
// round some up). No string is made unless something differs.
bool verify(const QpState& q, const plan::ModifyPlan& m, const ibv_qp_attr& sent, std::string* differs);
// The same check when all that matters is "everything as set": no text, for the bring-up
// window's common case (false sends the step to verify() for the words).
bool reads_back(const QpState& q, const plan::ModifyPlan& m, const ibv_qp_attr& sent);
// A transition whose attr could not be built (a value with no run-time meaning, a missing
// peer): its failed report line; the run fails with `why`.
void attr_failure(RunState& st, report::RunReport& log, const std::string& phase, QpState& q, const plan::ModifyPlan& m, const std::string& why);

// A transition's follow-ups, each its own plan step (modify.cpp): receives re-posted after
// RESET->INIT, the flush after ->ERR, and the state read back after an expected completion
// error (IBV_EVENT_SQ_DRAINED after RTS->SQD is a WaitEvent: async_events.h). Return false
// when the run must stop.
bool repost_after_reset(report::RunReport& log, QpState& q);
bool flush_after_err(RunState& st, report::RunReport& log, QpState& q);
bool read_state(report::RunReport& log, QpState& q, const std::string& expected);
// ibv_modify_srq(IBV_SRQ_LIMIT) with step.srq_limit (srq_limit.cpp): arms the limit event.
bool arm_srq_limit(RunState& st, report::RunReport& log, const plan::Step& step, const std::string& phase);

// Traffic (smoke.cpp, op_workloads.cpp), one plan step each; each host plays its own role: sender or
// receiver of a smoke pair, initiator or responder of a workload. Return false on failure.
bool smoke_step(RunState& st, report::RunReport& log, const RunOptions& o, const plan::Step& step);       // SmokeSend, SmokeReceive
bool prepare_workload(RunState& st, report::RunReport& log, const plan::Step& step);                       // PrepareData
bool run_workloads(RunState& st, report::RunReport& log, const RunOptions& o, const std::vector<const plan::Step*>& steps);  // together
bool verify_workload(RunState& st, report::RunReport& log, const plan::Step& step);                        // Verify

// What the exchange says about a QP's peer (nullptr when it has no connect: or was not published).
const RemoteQp* peer_of(const RunState& st, const QpState& q);
// What this host publishes about a QP (qpn 0 until it is created) and about an MR. The
// bring-up runner assembles this host's directory from them (BringUpRunner::publish).
RemoteQp published_qp(const QpState& q);
RemoteMr published_mr(const std::string& host, const verbs::Mr& m);
// The peer's GID as published in the exchange.
ibv_gid gid_of(const RemoteQp& p);
// A UD sender's address handle for its peer, created once per (from, to) and owned by the run;
// the smoke exchange and script workloads share it.
ibv_ah* peer_ah(RunState& st, QpState& from, plan::ObjectId to, const RemoteQp& to_values);

}  // namespace qpo::exec
