// Lua-scripted workloads (`script:` in a workload) on the C++ data path (src/lua): the
// executor fills one Endpoint per QP from what it brought up, the script drives them, and
// the script's summary becomes the step's results, judged against the workload's thresholds.
//
// Across hosts, every host runs this for every script workload, with the workers whose QPs
// it owns (maybe none), and the hosts meet through the run's Channel (workload_meeting.h):
// they clear the executor's leftover receives, pass each w:barrier() together, and end by
// sending every worker's results to every host. Each host with workers runs report() on all
// the results and judges the thresholds, so all hosts agree on the outcome; the host of the
// workload's `qp:` (the first initiator) records the results in the report, the others a
// line saying where they are.
#include "exec/lua_workload.h"

#include <unistd.h>

#include <chrono>
#include <memory>

#include "exec/endpoints.h"
#include "exec/executor.h"
#include "exec/progress_line.h"
#include "exec/script_endpoints.h"
#include "exec/steps.h"
#include "exec/workload_meeting.h"
#include "exec/workload_results.h"
#include "lua/workload.h"
#include "plan/workload_run.h"

namespace qpo::exec {

namespace {

lua::Callbacks callbacks(ProgressLine& line) {
  lua::Callbacks cb;  // cancel: the caller's (run_workloads: told to stop, or the stage halted)
  // The executor's own flag, not a copy: run_workload relays it to every worker, so a SIGINT
  // reaches a ping-pong, a barrier, a hook or qpo.sleep as well as a stream. It is only ever
  // set by request_stop(), so hosts run as threads (--local) cannot stop each other with it.
  cb.stop = &stop_flag();
  cb.log = [&line](const std::string& worker, const std::string& text) {
    line.log("[" + (worker.empty() ? std::string("script") : worker) + "] " + text);
  };
  // Streams report about once a second: draw the live line (on a terminal only).
  cb.progress = [&line](const std::string& worker, const dataplane::StreamProgress& p) { line.update(worker, p); };
  return cb;
}

// The step (with the results), and the verdict: a failed script, or a missed threshold.
bool record(report::RunReport& log, const plan::WorkloadParams& w, report::StepResult r, const lua::WorkloadResult& result) {
  if (!result.ok) {
    r.status = report::StepStatus::Failed;
    r.message = result.error;
    log.add(std::move(r));
    log.fail("workload '" + w.name + "': " + result.error);
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
  log.add(std::move(r));
  if (!missed.empty()) log.fail(missed);
  return missed.empty();
}

}  // namespace

namespace {

report::StepResult script_step(const RunState& st, const plan::Step& step, const plan::WorkloadParams& w) {
  report::StepResult r;
  r.plan_step = step.index;
  r.host = st.host;
  r.phase = "traffic";
  r.verb = "script";
  r.object = w.name;
  r.detail = w.script + " on " + w.qp;
  for (const auto& more : w.more_qps) r.detail += ", " + more;
  return r;
}

bool failed_step(report::RunReport& log, const plan::WorkloadParams& w, report::StepResult r, const std::string& problem) {
  r.status = report::StepStatus::Failed;
  r.message = problem;
  log.add(std::move(r));
  log.fail("workload '" + w.name + "': " + problem);
  return false;
}

// The workers whose QPs are all on this host (their indexes in the plan's).
std::vector<size_t> workers_here(const RunState& st, const plan::WorkloadRun& run) {
  std::vector<size_t> out;
  for (size_t i = 0; i < run.worker_qps.size(); ++i) {
    bool here = !run.worker_qps[i].empty();
    for (const auto& q : run.worker_qps[i]) here = here && st.qps.has(q.id);
    if (here) out.push_back(i);
  }
  return out;
}

// Not the reporting host: the thresholds are judged here too (every host must stop the wave
// alike), but the results and the verdict belong to the host of the workload's qp:.
bool note_elsewhere(report::RunReport& log, const plan::WorkloadParams& w, report::StepResult r, const lua::WorkloadResult& result,
                    const std::string& reporter) {
  if (!result.ok) return failed_step(log, w, std::move(r), result.error);
  std::vector<report::ThresholdResult> judged;
  for (const auto& t : w.thresholds) judged.push_back(judge(t, result.summary));
  r.status = report::StepStatus::Ok;
  r.message = "workers here done; results and thresholds reported by host " + reporter;
  log.add(std::move(r));
  return missed_thresholds(w, judged).empty();
}

}  // namespace

ScriptWorkload::ScriptWorkload(RunState& st, const plan::Step& step, const RunOptions& o)
    : st_(st), step_(step), run_(st.plan->workload_of(step)), o_(o), spec_(run_.script) {
  spec_.timeout_ms = o.timeout_ms;
  spec_.all_workers = spec_.workers;
  spec_.workers.clear();
  for (size_t i : workers_here(st, run_)) {
    spec_.workers.push_back(spec_.all_workers[i]);
    worker_qps_.push_back(&run_.worker_qps[i]);
  }
  reporter_ = run_.reporter_host.empty() ? st.host : run_.reporter_host;
  if (!st.channel) alone_ = std::make_unique<InProcessChannel>(1);
  meeting_ = std::make_unique<WorkloadMeeting>(st.channel ? *st.channel : *alone_, st.host, run_.params.name);
}

ScriptWorkload::~ScriptWorkload() { route_home(); }

bool ScriptWorkload::prepare(report::RunReport& log) {
  std::vector<const plan::ScriptQp*> qps;  // every QP of this host's workers
  for (const auto* worker : worker_qps_)
    for (const auto& q : *worker) qps.push_back(&q);
  std::map<plan::QpId, uint32_t> to_clear;
  std::string problem = drain_bringup_receives(st_, qps, o_.timeout_ms, &to_clear);
  if (problem.empty()) problem = local_endpoints(st_, qps, endpoints_);
  try {
    auto all = meeting_->ready(to_clear, problem);
    problem = clear_receives_across_hosts(st_, run_, all, o_.timeout_ms);
  } catch (const std::exception& e) {
    if (problem.empty()) problem = e.what();
  }
  if (problem.empty()) return true;
  meeting_->fail(problem);
  st_.channel_broken |= meeting_->channel_failed();
  return failed_step(log, run_.params, script_step(st_, step_, run_.params), problem);
}

void ScriptWorkload::run(const std::atomic<bool>* cancel, const std::string* cancel_why, bool beside, StageSides& sides) {
  ran_ = true;
  auto start = std::chrono::steady_clock::now();
  try {
    if (spec_.workers.empty()) {
      // No worker here: meet the others at their barriers until all are done.
      meeting_->finish({}, "");
      result_.ok = true;
    } else {
      ProgressLine line(STDERR_FILENO, run_.params.name);
      lua::Callbacks cb = callbacks(line);
      cb.cancel = cancel;  // the stage's: this host told to stop, or another side failed
      cb.cancel_why = cancel_why;
      WorkloadMeeting& meeting = *meeting_;
      cb.barrier = [&meeting](const std::string& tag) { meeting.barrier(tag); };
      cb.gather = [&meeting](const std::vector<lua::WorkerResult>& mine, const std::string& error) {
        return meeting.finish(mine, error);
      };
      if (spec_.workers.size() < spec_.all_workers.size() && st_.channel)
        cb.signals = [this](const std::map<std::string, int64_t>& add, std::map<std::string, int64_t>* totals) {
          return st_.channel->signals(run_.params.name, add, totals);
        };
      cb.access = access_;
      cb.start = [&sides](std::function<void()> body) { return sides.start_worker(std::move(body)); };
      result_ = lua::run_workload(spec_, endpoints_, cb);
      line.finish();
    }
  } catch (const std::exception& e) {  // the meeting's failures, or no memory
    result_.ok = false;
    result_.error = e.what();
  }
  // run_workload returns early (script load, setup()) without meeting: tell the others.
  if (!meeting_->closed())
    meeting_->fail(result_.error.empty() ? "the workload ended without meeting the other hosts" : result_.error);
  st_.channel_broken |= meeting_->channel_failed();
  // Stopped because another side of the stage failed (not told to stop: that error is its own
  // line's and the run's reason, as before): its workers' error carries the words.
  stopped_by_other_ = beside && !result_.ok && cancel && cancel->load(std::memory_order_acquire) &&
                      result_.error.find(kStageSideFailed) != std::string::npos;
  micros_ = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
}

void ScriptWorkload::skip(const std::string& why, bool cause) {
  ran_ = true;
  stopped_by_other_ = !cause;
  result_.ok = false;
  result_.error = "not started: " + why;
  meeting_->fail(why);
  st_.channel_broken |= meeting_->channel_failed();
}

void ScriptWorkload::route() {
  for (const auto* qps : worker_qps_) {  // a worker here has every QP here, at least one
    int owner = access_for(st_, st_.qps.at(qps->front().id)).owner;
    for (const auto& sq : *qps) {
      const QpState* q = &st_.qps.at(sq.id);
      route_to(st_, *q, owner);
      routed_.push_back(q);
    }
    access_.push_back({&st_.router, owner});
  }
}

void ScriptWorkload::route_home() {
  for (const QpState* q : routed_) exec::route_home(st_, *q);
  routed_.clear();
  access_.clear();
}

bool ScriptWorkload::report(report::RunReport& log, std::vector<std::string>* echoes) {
  route_home();
  if (!ran_) return true;
  const plan::WorkloadParams& w = run_.params;
  report::StepResult r = script_step(st_, step_, w);
  r.micros = micros_;
  if (stopped_by_other_) {  // a consequence: its line, not the run's reason
    r.status = report::StepStatus::Failed;
    r.message = result_.error;
    if (echoes) echoes->push_back("workload '" + w.name + "': " + result_.error);
    log.add(std::move(r));
    return false;
  }
  if (spec_.workers.empty()) return result_.ok || failed_step(log, w, std::move(r), result_.error);
  if (reporter_ != st_.host) return note_elsewhere(log, w, std::move(r), result_, reporter_);
  return record(log, w, std::move(r), result_);
}

}  // namespace qpo::exec
