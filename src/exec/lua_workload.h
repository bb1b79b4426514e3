#pragma once
// A script workload (`script:`) of a timeline stage, in three parts so that it can run at the
// same time as the stage's op workloads (`workloads: [a, b]` runs them together):
//   prepare()  on the session's thread, before any side of the stage starts: the receives
//              bring-up left are cleared (polling the QPs' CQs), the endpoints made, and the
//              hosts' first meeting round (which workers are where, what each must clear);
//   run()      on the stage's scripts conductor (a side of the stage, exec/stage_sides.h),
//              beside the op workloads' sides: setup(), the workers (sides of the stage too),
//              w:barrier(), the final round with the other hosts, the script's report();
//   report()   back on the session's thread once every side joined: the step's line.
// When it runs is the plan's (plan/script_turn.h, the step's script_turn): beside the op
// workloads, the scripts beside one after another in plan order; or first, alone, on the
// session's thread, before the stage's other workloads are set up, when it shares a QP or an
// SRQ with them. Beside them on a CQ they share, it reads the CQ through the run's router like
// every other reader (route() hands it all completions of its workers' QPs, report() gives
// them back); otherwise nobody else polls its CQs and it keeps a router of its own
// (lua/workload.cpp), where event mode sees only the script's QPs.
#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "dataplane/endpoint.h"
#include "exec/executor.h"
#include "exec/run_state.h"
#include "exec/stage_sides.h"
#include "lua/workload.h"
#include "plan/plan.h"

namespace qpo::exec {

class WorkloadMeeting;

class ScriptWorkload {
 public:
  ScriptWorkload(RunState& st, const plan::Step& step, const RunOptions& o);
  ~ScriptWorkload();
  ScriptWorkload(const ScriptWorkload&) = delete;
  ScriptWorkload& operator=(const ScriptWorkload&) = delete;

  // False when it cannot run: its failed line is in `log` and the other hosts were told.
  bool prepare(report::RunReport& log);
  // Never throws. Its workers are sides of `sides` (the stage's); it returns when they have
  // all ended. `cancel` turns true (after `*cancel_why` is set) when this host was told to
  // stop or, `beside` op workloads, when another side of the stage failed: the workers stop
  // as on SIGINT, at once (a failure then is that side's consequence, see report()).
  void run(const std::atomic<bool>* cancel, const std::string* cancel_why, bool beside, StageSides& sides);
  // Instead of run(), when it cannot have its turn: the other hosts' workers, waiting for
  // this host's at the meeting, fail at once with `why` (not after the phase timeout), and
  // the step's line says it did not start. `cause`: `why` is the run's reason (no thread for
  // the scripts), else another side's failure or a stop is (an echo, see report()).
  void skip(const std::string& why, bool cause);
  bool ran() const { return ran_; }
  // run() ended with the workload failed: the stage's other sides stop.
  bool failed() const { return ran_ && !result_.ok; }
  // The step's line (results, thresholds) and the verdict; false when it failed. Nothing when
  // run() was never called (a side before it failed): the step is reported as not run. A
  // workload stopped because another side of the stage failed says so in its line, and its
  // words go to `echoes` instead of the verdict (the other side's error is the run's reason);
  // with `echoes` null (the run already has its reason) its line is all it adds.
  bool report(report::RunReport& log, std::vector<std::string>* echoes);
  // Every completion of a worker's QPs to that worker in the run's router (before run(), for
  // a script beside op workloads on a CQ they share), and back to the QPs' own readers
  // (report() does it; again is harmless). On the session's thread, with no side running.
  void route();
  void route_home();
  const plan::Step& step() const { return step_; }

 private:
  RunState& st_;
  const plan::Step& step_;
  const plan::WorkloadRun& run_;
  const RunOptions& o_;
  lua::WorkloadSpec spec_;  // its workers: those of this host
  std::vector<const std::vector<plan::ScriptQp>*> worker_qps_;  // spec_.workers' QPs, lowered
  std::string reporter_;  // the host that records its results
  std::unique_ptr<Channel> alone_;  // a session without a run's channel (tests): this host only
  std::unique_ptr<WorkloadMeeting> meeting_;
  std::map<std::string, dataplane::Endpoint> endpoints_;
  std::vector<dataplane::CqAccess> access_;  // after route(): per worker, the run's router and its owner
  std::vector<const QpState*> routed_;       // the QPs route() gave a worker, until route_home
  bool ran_ = false;
  bool stopped_by_other_ = false;  // it failed after the stage's cancel was set
  lua::WorkloadResult result_;
  double micros_ = 0;
};

}  // namespace qpo::exec
