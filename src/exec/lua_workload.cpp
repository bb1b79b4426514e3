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
#include <unistd.h>

#include <chrono>
#include <memory>

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

lua::Callbacks callbacks(const RunState& st, ProgressLine& line) {
  lua::Callbacks cb;
  // The channel's stop request for this host (--local: the phase timeout found it late).
  if (const StopRequest* req = st.channel ? st.channel->stop_request() : nullptr) {
    cb.cancel = &req->requested;
    cb.cancel_why = &req->why;
  }
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
bool record(report::RunReport& log, const scenario::Workload& w, report::StepResult r, const lua::WorkloadResult& result) {
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

report::StepResult script_step(const RunState& st, const scenario::Workload& w) {
  report::StepResult r;
  r.host = st.host;
  r.phase = "traffic";
  r.verb = "script";
  r.object = w.name;
  r.detail = w.script + " on " + w.qp.name;
  for (const auto& more : w.more_qps) r.detail += ", " + more.name;
  return r;
}

bool failed_step(report::RunReport& log, const scenario::Workload& w, report::StepResult r, const std::string& problem) {
  r.status = report::StepStatus::Failed;
  r.message = problem;
  log.add(std::move(r));
  log.fail("workload '" + w.name + "': " + problem);
  return false;
}

// The workers whose QPs are all on this host.
std::vector<lua::WorkerSpec> workers_here(const RunState& st, const std::vector<lua::WorkerSpec>& all) {
  std::vector<lua::WorkerSpec> out;
  for (const auto& worker : all) {
    bool here = !worker.qps.empty();
    for (const auto& q : worker.qps) here = here && st.qp_named(q) != nullptr;
    if (here) out.push_back(worker);
  }
  return out;
}

// Not the reporting host: the thresholds are judged here too (every host must stop the wave
// alike), but the results and the verdict belong to the host of the workload's qp:.
bool note_elsewhere(report::RunReport& log, const scenario::Workload& w, report::StepResult r, const lua::WorkloadResult& result,
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

bool run_lua_workload(RunState& st, report::RunReport& log, const plan::WorkloadRun& run, const RunOptions& o) {
  const scenario::Workload& w = run.spec;
  report::StepResult r = script_step(st, w);
  lua::WorkloadSpec spec = run.script;
  spec.timeout_ms = o.timeout_ms;
  spec.all_workers = spec.workers;
  spec.workers = workers_here(st, spec.workers);
  bool spans_hosts = spec.workers.size() < spec.all_workers.size();
  std::string reporter = run.reporter_host.empty() ? st.host : run.reporter_host;
  InProcessChannel alone(1);  // a session without a run's channel (tests): this host only
  WorkloadMeeting meeting(st.channel ? *st.channel : alone, st.host, w.name);

  std::map<std::string, dataplane::Endpoint> endpoints;
  std::map<std::string, uint32_t> to_clear;
  std::string problem = drain_bringup_receives(st, run, spec, o.timeout_ms, &to_clear);
  if (problem.empty()) problem = local_endpoints(st, run, spec, endpoints);
  try {
    auto all = meeting.ready(to_clear, problem);
    problem = clear_receives_across_hosts(st, run, all, o.timeout_ms);
  } catch (const std::exception& e) {
    if (problem.empty()) problem = e.what();
  }
  if (!problem.empty()) {
    meeting.fail(problem);
    st.channel_broken |= meeting.channel_failed();
    return failed_step(log, w, std::move(r), problem);
  }
  if (spec.workers.empty()) {
    // No worker here: meet the others at their barriers until all are done.
    try {
      meeting.finish({}, "");
    } catch (const std::exception& e) {
      st.channel_broken |= meeting.channel_failed();
      return failed_step(log, w, std::move(r), e.what());
    }
    return true;
  }

  ProgressLine line(STDERR_FILENO, w.name);
  lua::Callbacks cb = callbacks(st, line);
  cb.barrier = [&meeting](const std::string& tag) { meeting.barrier(tag); };
  cb.gather = [&meeting](const std::vector<lua::WorkerResult>& mine, const std::string& error) {
    return meeting.finish(mine, error);
  };
  if (spans_hosts && st.channel)
    cb.signals = [&st, &w](const std::map<std::string, int64_t>& add, std::map<std::string, int64_t>* totals) {
      return st.channel->signals(w.name, add, totals);
    };
  auto start = std::chrono::steady_clock::now();
  auto result = lua::run_workload(spec, endpoints, cb);
  line.finish();
  // run_workload returns early (script load, setup()) without meeting: tell the others.
  if (!meeting.closed()) meeting.fail(result.error.empty() ? "the workload ended without meeting the other hosts" : result.error);
  st.channel_broken |= meeting.channel_failed();
  r.micros = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  if (reporter != st.host) return note_elsewhere(log, w, std::move(r), result, reporter);
  return record(log, w, std::move(r), result);
}

}  // namespace qpo::exec
