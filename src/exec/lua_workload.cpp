// Lua-scripted workloads (`script:` in a workload) on the C++ data path (src/lua): the
// executor fills one Endpoint per QP from what it brought up, the script drives them, and
// the script's summary becomes the step's results, judged against the workload's thresholds.
//
// The steps are kept apart so that a host running only some of the workers can reuse them:
// script_spec (check/script_spec.h: the same args `qpo validate` checked),
// drain_bringup_receives and local_endpoints (script_endpoints.h: the QPs this session owns),
// callbacks (progress, log, stop; a cross-host barrier would go here), record (the step, the
// results, the verdict). For now every worker's QP must be in this session (one host, or
// --local).
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>

#include "check/script_spec.h"
#include "exec/progress_line.h"
#include "exec/script_endpoints.h"
#include "exec/steps.h"
#include "exec/workload_results.h"
#include "lua/workload.h"

namespace qpo::exec {

namespace {

std::atomic<bool> g_lua_stop{false};

lua::Callbacks callbacks(ProgressLine& line) {
  lua::Callbacks cb;
  g_lua_stop = stop_requested();
  cb.stop = &g_lua_stop;
  cb.log = [&line](const std::string& worker, const std::string& text) {
    line.log("[" + (worker.empty() ? std::string("script") : worker) + "] " + text);
  };
  // Streams report about once a second: draw the live line (on a terminal only), and pass a
  // SIGINT on to the workload's stop flag, which run_workload relays to the workers.
  cb.progress = [&line](const std::string& worker, const dataplane::StreamProgress& p) {
    if (stop_requested()) g_lua_stop = true;
    line.update(worker, p);
  };
  return cb;
}

// The step (with the results), and the verdict: a failed script, or a missed threshold.
bool record(RunState& st, const scenario::Workload& w, report::StepResult r, const lua::WorkloadResult& result) {
  if (!result.ok) {
    r.status = report::StepStatus::Failed;
    r.message = result.error;
    st.report.add(std::move(r));
    st.report.fail("workload '" + w.name + "': " + result.error);
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
  st.report.add(std::move(r));
  if (!missed.empty()) st.report.fail(missed);
  return missed.empty();
}

}  // namespace

bool run_lua_workload(RunState& st, const scenario::Workload& w, const RunOptions& o) {
  report::StepResult r;
  r.host = st.host;
  r.phase = "traffic";
  r.verb = "script";
  r.object = w.name;
  r.detail = w.script + " on " + w.qp.name;
  for (const auto& more : w.more_qps) r.detail += ", " + more.name;
  lua::WorkloadSpec spec = check::script_spec(*st.scenario, w);
  spec.timeout_ms = o.timeout_ms;
  std::map<std::string, dataplane::Endpoint> endpoints;
  std::string problem = drain_bringup_receives(st, w, spec, o.timeout_ms);
  if (problem.empty()) problem = local_endpoints(st, w, spec, endpoints);
  if (!problem.empty()) {
    r.status = report::StepStatus::Failed;
    r.message = problem;
    st.report.add(std::move(r));
    st.report.fail("workload '" + w.name + "': " + problem);
    return false;
  }
  ProgressLine line(STDERR_FILENO, w.name);
  lua::Callbacks cb = callbacks(line);
  auto start = std::chrono::steady_clock::now();
  auto result = lua::run_workload(spec, endpoints, cb);
  line.finish();
  r.micros = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  return record(st, w, std::move(r), result);
}

}  // namespace qpo::exec
