// A run is one HostSession per host, meeting through a Channel at fixed stages:
//   setup + RESET->INIT + receives | exchange | RTR/RTS | the plan's timeline stages | teardown.
// Every host passes the same stages in the same order; a host that fails arrives at its
// next stage with ok=false, every host learns it there, and all tear down. Teardown always
// runs, in reverse creation order. Here the sessions are threads of one process; the agent
// (multi-host) runs one session per machine behind the same Channel interface.
#include "exec/executor.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "exec/async_events.h"
#include "exec/bringup_runner.h"
#include "exec/cm_steps.h"
#include "exec/failure_note.h"
#include "exec/faults.h"
#include "exec/host_load.h"
#include "exec/host_session.h"
#include "exec/memory_windows.h"
#include "exec/multicast.h"
#include "exec/multicast_cm.h"
#include "exec/steps.h"
#include "exec/unrun_steps.h"
#include "report/measurement_quality.h"
#include "report/step_line.h"
#include "util/strings.h"
#include "util/thread_group.h"

namespace qpo::exec {

namespace {

std::atomic<bool> g_stop{false};

using plan::Phase;

}  // namespace

HostSession::HostSession(const plan::Plan& p, std::string host, const RunOptions& o) : p_(p), o_(o) {
  st_.plan = &p;
  st_.devices.size_for(p.count_of(plan::ObjectKind::Device));
  st_.pds.size_for(p.count_of(plan::ObjectKind::Pd));
  st_.cqs.size_for(p.count_of(plan::ObjectKind::Cq));
  st_.channels.size_for(p.count_of(plan::ObjectKind::Cq));
  st_.srqs.size_for(p.count_of(plan::ObjectKind::Srq));
  st_.xrcds.size_for(p.count_of(plan::ObjectKind::Xrcd));
  st_.qps.size_for(p.qp_count());
  st_.mrs.size_for(p.count_of(plan::ObjectKind::Mr));
  st_.mws.size_for(p.count_of(plan::ObjectKind::Mw));
  st_.host = std::move(host);
  st_.externals = &externals_;
  externals_.values_to_stdout(o.stdout_is_log);
  log_.scenario = p.scenario;
  log_.file = p.file;
  for (const auto& h : p.hosts)
    if (h.host == st_.host) plan_ = &h;
  // Every step adds a report line: reserve them so the vector never copies mid-bring-up.
  if (plan_) log_.steps.reserve(plan_->steps.size() * 2 + 64);
  dataplane::clock::ticks_per_second();  // calibrate now, outside any timed step
  bringup_.set_threads(o.bringup_threads);
  if (plan_) bringup_.begin(st_, p_, *plan_);
}

bool HostSession::ok() const { return log_.verdict == report::Verdict::Pass && !g_stop && !told_to_stop(); }

void HostSession::check_stop() {
  // Aborted because another host failed (the agents' controller, or the in-process channel):
  // one line says so, and whatever the stop broke here (a wait for a CM event cut short) is
  // a symptom: the reason is the other host's. An error of this host's own stays its reason.
  if (told_to_stop() && is_echo(stop_request_->why) && !abort_reported_) {
    abort_reported_ = true;
    take_abort(log_, st_.host, stop_request_->why, bringup_.unnamed_latest_step());  // this host's own error stays its reason
  }
  if (log_.verdict != report::Verdict::Pass) return;
  if (g_stop) log_.fail("interrupted (SIGINT); tore down");
  else if (told_to_stop()) log_.fail(stop_request_->why + "; tore down");
}

// Before arriving with ok=false: tell the channel why (the other hosts stop at once).
void HostSession::tell_failure(Channel& ch) {
  if (!ok()) ch.note_failure(failure_note(log_, st_.host));
}

void HostSession::fail_after(Channel& ch, const std::string& what) {
  if (!ok()) return;
  std::string why = ch.failure();
  log_.fail("another host failed " + (why.empty() ? what : what + ": " + why) + "; tore down");
}

template <typename Fn>
void HostSession::for_setup_steps(Fn fn) {
  if (!plan_) return;
  for (const auto& step : plan_->steps) {
    if (step.phase != Phase::Setup) continue;
    check_stop();
    if (!ok()) return;
    log_.current_step = step.index;
    fn(step);
  }
}

void HostSession::setup() {
  for_setup_steps([&](const plan::Step& step) {
    if (step.kind == plan::StepKind::OpenDevice) {
      const auto& d = p_.devices.at(step.id);
      auto& r = run_step(log_, st_.host, "setup", step.verb, step.object, "name=" + d.dev_name, [&] { open_device(st_, d, step.id); });
      if (r.status == report::StepStatus::Ok) {
        auto& ds = st_.devices.at(step.id);
        r.message = ds.ctx().device_name();
        if (!log_.device.empty()) log_.device += ", ";
        log_.device += ds.ctx().device_name();
        counters_at_open_[step.id] = read_hw_counters(ds);
      }
      return;
    }
    if (step.kind == plan::StepKind::QueryPort || step.kind == plan::StepKind::QueryGid) {
      // Done with the open (verbs::Context queries the port and the GID table); the lines say what they read.
      report_device_query(step);
      return;
    }
    if (step.kind == plan::StepKind::Fault) return;  // faults are applied by the session (faults.cpp)
    if (step.kind == plan::StepKind::Capture) return captures_.start(st_, log_, step, o_.capture_dir);
    if (step.kind == plan::StepKind::RegSlots && step.setup == plan::Step::kNoSetup)
      return;  // a QP's (an SRQ's carries its SRQ): registered when its QP is prepared
    if (!check_capabilities()) return;
    if (step.kind == plan::StepKind::CreateQp) return bringup_.prepare(st_, log_, step);  // made in the window (open_window)
    auto& r = run_step(log_, st_.host, "setup", step.verb, step.object, "", [&] { create_object(st_, step); });
    if (r.status == report::StepStatus::Failed) note_unsupported(st_, log_, r.err, r.message);
  });
}

// The first step of `kind` before bring-up (0 when the plan has none).
int HostSession::setup_step(plan::StepKind kind) const {
  if (plan_)
    for (const auto& step : plan_->steps)
      if (step.kind == kind && step.stage < 0) return step.index;
  return 0;
}

// The port and GID lines of an opened device: what the open read (verbs::Context).
void HostSession::report_device_query(const plan::Step& step) {
  const DeviceState* device = st_.devices.find(step.id);
  if (!device) return;
  const auto& ds = *device;
  report::StepResult r;
  r.host = st_.host;
  r.phase = "setup";
  r.verb = step.verb;
  r.object = step.object;
  if (step.kind == plan::StepKind::QueryPort)
    r.message = "port " + std::to_string(ds.facts->port) + " " +
                (ds.ctx().port_attr().state == IBV_PORT_ACTIVE ? "ACTIVE" : "not active") + ", active_mtu " +
                std::to_string(128 << ds.ctx().port_attr().active_mtu);
  else
    r.message = "gid[" + std::to_string(ds.gid_index) + "]=" + verbs::gid_text(ds.gid);
  log_.add(std::move(r));
}

// Once per host, before the first object that depends on what the device can do.
bool HostSession::check_capabilities() {
  if (capability_checked_) return ok();
  capability_checked_ = true;
  std::string why = unsupported_reason(st_, p_.needs);
  if (why.empty()) return true;
  report::StepResult r;
  r.host = st_.host;
  r.phase = "setup";
  r.verb = "ibv_query_device";
  r.status = report::StepStatus::Skipped;
  r.message = why;
  log_.add(r);
  log_.verdict = report::Verdict::Unsupported;
  log_.reason = why;
  return false;
}

// The bring-up window opens: every QP created, then the bring-up steps before the exchange.
// Only these run between first_create_ and the exchange; everything else (the other setup
// steps, fault injection, preparing each QP) is done before. Under emulation the first
// run of any piece of code costs far more than its later runs, so one-off work kept out of
// the window is time the window does not measure (bench/qp_rate.sh).
void HostSession::open_window() {
  if (!plan_ || !check_capabilities()) return;
  bringup_.open(st_);
  if (bringup_.has_qps()) {  // a host may have only SRQs
    create_started_ = true;
    first_create_ = std::chrono::steady_clock::now();
    bringup_.create_qps(st_, log_);
  }
  bringup_.run_half(st_, log_, 0);  // after a failed create too: what threads ran ahead gets its lines
}

// The bring-up steps after the exchange (open_window ran the half before it).
void HostSession::close_window() {
  if (plan_ && bringup_.opened()) bringup_.run_half(st_, log_, 1);
}

bool HostSession::run_external_steps(plan::StepKind kind) {
  if (!plan_ || p_.externals.empty()) return true;
  auto start = std::chrono::steady_clock::now();
  bool all_done = true;
  for (const auto& step : plan_->steps) {
    if (step.kind != kind) continue;
    all_done = kind == plan::StepKind::ExternalExchange ? externals_.exchange(st_, log_, step, o_.phase_timeout_ms)
                                                        : externals_.reply(st_, log_, step, o_.phase_timeout_ms);
    if (!all_done) break;
  }
  // The bring-up figure is qpo's own work: the time a tool took to connect or answer is not in it.
  if (create_started_) first_create_ += std::chrono::steady_clock::now() - start;
  return all_done;
}

// The published values become the exchange's report lines, formatted after the bring-up
// stage: text formatting (GIDs, hex) for thousands of QPs would otherwise sit inside the
// timed window between the first create and the last RTS.
void HostSession::log_published() {
  std::vector<report::StepResult> lines;
  for (const auto& [id, q] : st_.dir.qps) {
    if (q.host != st_.host) continue;  // what this host published
    report::StepResult r;
    r.host = st_.host;
    r.phase = "exchange";
    r.verb = "publish";
    r.object = p_.peer_name(id);
    r.status = report::StepStatus::Info;
    ibv_gid g;
    std::copy(q.gid.begin(), q.gid.end(), g.raw);
    r.message = "qp_num " + std::to_string(q.qpn) + ", sq_psn " + util::hex(q.sq_psn) + ", lid " + std::to_string(q.lid) +
                ", gid " + verbs::gid_text(g);
    lines.push_back(std::move(r));
  }
  if (lines.empty() && setup_step(plan::StepKind::Publish)) {
    // Every QP of this host is an exchange_only one (its values ride on rdma_cm): the step
    // still says what went through the agents.
    size_t mrs = 0;
    for (const auto& [key, m] : st_.dir.mrs) mrs += m.host == st_.host;
    lines.push_back(report::step_line(st_.host, "exchange", "publish", st_.host, report::StepStatus::Info,
                                      "no QPs (their exchange rides on rdma_cm), " + std::to_string(mrs) + " MRs"));
  }
  for (auto& line : lines) line.plan_step = setup_step(plan::StepKind::Publish);
  if (int resolve = setup_step(plan::StepKind::Resolve)) {
    report::StepResult r;
    r.plan_step = resolve;
    r.host = st_.host;
    r.phase = "exchange";
    r.verb = "resolve";
    r.object = st_.host;
    r.status = report::StepStatus::Info;
    r.message = std::to_string(st_.dir.qps.size()) + " QPs and " + std::to_string(st_.dir.mrs.size()) +
                " MRs in the directory";
    r.micros = exchange_us_;  // publish, wait for every host, read the directory
    lines.push_back(std::move(r));
  }
  for (auto& line : lines) log_.add(std::move(line));  // in the exchange's places
}

// A barrier's line, once every host arrived at it.
void HostSession::report_barrier(int plan_step) {
  if (!plan_step) return;
  report::StepResult r;
  r.plan_step = plan_step;
  r.host = st_.host;
  r.phase = "exchange";
  r.verb = "barrier";
  r.object = plan_->steps[static_cast<size_t>(plan_step - 1)].object;
  r.message = "every host arrived";
  r.micros = meeting_us_;  // this host's wait for the others
  log_.add(std::move(r));
}

// One step of the timeline on this host. Workload steps of a stage run together (run_stage).
bool HostSession::run_timeline_step(const plan::Step& step) {
  using plan::StepKind;
  auto qp = [&]() -> QpState& { return st_.qps.at(step.id); };
  if (is_cm_step(step)) return run_cm_step(st_, log_, p_, o_, step);  // rdma_cm (cm_steps.h)
  switch (step.kind) {
    case StepKind::Modify:
      return modify_qp(st_, log_, "transitions", qp(), p_.modify_of(step));
    case StepKind::FlushPoll: return flush_after_err(st_, log_, qp());
    case StepKind::RepostRecv: return repost_after_reset(log_, qp());
    case StepKind::WaitEvent: return wait_event(st_, log_, step, o_);
    case StepKind::ForbidEvent: return forbid_event(st_, log_, step);
    case StepKind::ModifySrq: return arm_srq_limit(st_, log_, step, "transitions");
    case StepKind::ReadState: return read_state(log_, qp(), step.args.empty() ? "" : step.args[0].value);
    case StepKind::SmokeSend:
    case StepKind::SmokeReceive: return smoke_step(st_, log_, o_, step);
    case StepKind::PrepareData: return prepare_workload(st_, log_, step);
    case StepKind::CreateAh:
      return run_step(log_, st_.host, "traffic", step.verb, step.object, "", [&] {
               const auto& pair = step.extra().smoke;
               peer_ah(st_, st_.qp_here(pair.sender_id), pair.receiver_id, st_.dir.qps.at(pair.receiver_id));
             }).status != report::StepStatus::Failed;
    case StepKind::Verify: return verify_workload(st_, log_, step);
    case StepKind::Fault:
      // Faults `during: traffic`: all of this host's at its first fault step, off after the
      // last workload stage (run()).
      if (!traffic_faults_) {
        traffic_faults_ = std::make_unique<Faults>(st_, log_, p_.faults, "traffic", "traffic");
        if (!traffic_faults_->ok()) log_.fail("fault injection failed");
      }
      return ok();
    case StepKind::PacketEvents:
      events_.arm(st_, log_, p_, step);
      return ok();
    case StepKind::Pause: {
      run_step(log_, st_.host, "traffic", "pause", step.object, "", [&] {
        auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(step.extra().pause_ms);
        while (std::chrono::steady_clock::now() < until && !stop_now(st_)) std::this_thread::sleep_for(std::chrono::milliseconds(10));
      });
      return true;
    }
    case StepKind::Barrier: return true;  // the stage's meeting is the barrier: its line comes after it
    case StepKind::SetLink:
      if (!links_) links_ = std::make_unique<LinkStates>(st_, log_);
      return links_->set(step);
    case StepKind::BindMw: return bind_mw(st_, log_, o_, step);
    case StepKind::InvalidateMw: return invalidate_mw(st_, log_, o_, step);
    case StepKind::PublishMw: return publish_mws(st_, log_, step);
    case StepKind::AttachMcast: return attach_mcast(st_, log_, step);
    case StepKind::CreateMcastAh: return create_mcast_ah(st_, log_, step);
    case StepKind::CmMcastChannel: return cm_mcast_channel(st_, log_, step);
    case StepKind::CmJoinMcast: return cm_join_mcast(st_, log_, o_, step);
    default:
      log_.fail("internal error: plan step " + std::to_string(step.index) + " (" + step.verb + ") is not a timeline step");
      return false;
  }
}

// A stage's steps on this host, in plan order; its workloads start together at the first.
void HostSession::run_stage(const std::vector<const plan::Step*>& steps) {
  std::vector<const plan::Step*> workloads;
  for (const auto* step : steps)
    if (step->kind == plan::StepKind::Workload) workloads.push_back(step);
  bool workloads_ran = false;
  for (const auto* step : steps) {
    check_stop();
    if (!ok()) return;
    log_.current_step = step->index;
    if (step->kind == plan::StepKind::Workload) {
      if (!workloads_ran) run_measured_workloads(workloads);
      workloads_ran = true;
      continue;
    }
    run_timeline_step(*step);
  }
}

// The stage's workloads, and how far their figures can be trusted: the host's CPU load while
// they ran and the spread of their samples go into each result, and a warning line says
// when either is bad (a missed threshold on a busy machine must not read like a regression).
void HostSession::run_measured_workloads(const std::vector<const plan::Step*>& workloads) {
  size_t first = log_.steps.size();
  HostLoadSample before = sample_host_load();
  run_workloads(st_, log_, o_, workloads);
  report::HostLoad load = host_load_between(before, sample_host_load());
  // Each warning joins its result's plan step, after the result (the lines of a step keep
  // the order they came in).
  std::vector<report::StepResult> warnings;
  for (size_t i = first; i < log_.steps.size(); ++i) {
    auto& step = log_.steps[i];
    if (!step.workload) continue;
    auto judged = std::make_shared<report::WorkloadResult>(*step.workload);
    report::Quality q = report::judge_quality(load, judged->summary);
    judged->quality = q.fields;
    step.workload = judged;
    if (q.trusted()) continue;
    report::StepResult w;
    w.plan_step = step.plan_step;
    w.host = step.host;
    w.phase = step.phase;
    w.verb = "measurement";
    w.object = judged->name;
    w.status = report::StepStatus::Warning;
    w.message = report::quality_warning(q);
    warnings.push_back(std::move(w));
  }
  for (auto& w : warnings) log_.add(std::move(w));
}

// Teardown in the plan's order: each destroy step releases the resource of that name (one the
// run never made is skipped); anything the plan did not name goes last, in reverse creation
// order (a plan-equals-run test catches that).
void HostSession::teardown() {
  std::map<std::pair<std::string, std::string>, verbs::Resource*> by_name;
  for (auto& res : st_.owned) by_name[{res->destroy_verb(), res->name()}] = res.get();
  std::set<const verbs::Resource*> done;
  // An address handle the plan did not name (a script's lazy one) must still go before its PD.
  std::set<std::string> planned;
  if (plan_)
    for (const auto& step : plan_->steps)
      if (step.kind == plan::StepKind::Destroy) planned.insert(step.object);
  log_.current_step = 0;
  for (auto it = st_.owned.rbegin(); it != st_.owned.rend(); ++it)
    if (dynamic_cast<const verbs::Ah*>(it->get()) && !planned.count((*it)->name())) {
      release(**it);
      done.insert(it->get());
    }
  if (plan_)
    for (const auto& step : plan_->steps) {
      if (step.kind != plan::StepKind::Destroy) continue;
      auto it = by_name.find({step.verb, step.object});
      if (it == by_name.end()) continue;
      log_.current_step = step.index;
      release(*it->second);
      done.insert(it->second);
    }
  log_.current_step = 0;
  for (auto it = st_.owned.rbegin(); it != st_.owned.rend(); ++it)  // nothing, unless the plan missed one
    if (!done.count(it->get())) release(**it);

  st_.owned.clear();
}

void HostSession::release(verbs::Resource& res) {
  if (!res.holds()) return;  // released already, or a QP owner whose create never ran or failed
  StepTimer timer;
  int e = res.release();
  report::StepResult r;
  r.host = st_.host;
  r.phase = "teardown";
  r.verb = res.destroy_verb();
  r.object = res.name();
  r.err = e;
  r.micros = timer.micros();
  r.status = e ? report::StepStatus::Failed : report::StepStatus::Ok;
  if (e) {
    r.message = verbs::errno_name(e) + ": the object stays allocated";
    log_.fail(std::string(res.destroy_verb()) + "(" + res.name() + "): " + verbs::errno_name(e));
  }
  log_.add(r);
}

std::string HostSession::current_step_text() const {
  int n = log_.current_step;
  if (!plan_ || n < 1 || static_cast<size_t>(n) > plan_->steps.size()) return "host " + st_.host;
  const auto& step = plan_->steps[static_cast<size_t>(n) - 1];
  return "host " + st_.host + ", plan step " + std::to_string(n) + " (" + step.verb.str() + " " + step.object + ")";
}

bool HostSession::stage(Channel& ch, const std::string& name, const std::function<void()>& work) {
  if (!alive_) return false;
  if (ok()) {
    try {
      work();
    } catch (const std::exception& e) {
      log_.fail("internal error in stage '" + name + "' at " + current_step_text() + ": " + e.what());
    }
  }
  check_stop();
  if (st_.channel_broken) {
    alive_ = false;
    if (ok()) log_.fail("another host failed before '" + name + "'; tore down");
    return false;
  }
  tell_failure(ch);
  StepTimer meeting_timer;
  alive_ = ch.barrier(name, ok());
  meeting_us_ = meeting_timer.micros();
  if (!alive_) fail_after(ch, "before '" + name + "'");
  check_stop();
  return alive_;
}

report::RunReport HostSession::run(Channel& ch) {
  st_.channel = &ch;
  stop_request_ = ch.stop_request();
  std::unique_ptr<Faults> whole_run_faults;
  if (plan_ && !p_.externals.empty()) externals_.listen(st_, *plan_);  // tools may connect from now on
  try {
    setup();
    int fault_step = setup_step(plan::StepKind::Fault);
    if (ok() && fault_step) {
      log_.current_step = fault_step;
      whole_run_faults = std::make_unique<Faults>(st_, log_, p_.faults, "all", "setup");
    }
    if (whole_run_faults && !whole_run_faults->ok()) log_.fail("fault injection failed");
    if (ok()) open_window();
  } catch (const std::exception& e) {
    log_.fail("internal error during setup at " + current_step_text() + ": " + e.what());
  }
  check_stop();
  // The exchange is the first meeting point: everyone's QPN/PSN/GID/rkeys, or everyone stops.
  Directory mine = ok() ? bringup_.publish() : Directory{};
  hold_cm_exchange(st_, p_, mine);  // exchange_only pairs: their CM connection carries these instead
  tell_failure(ch);
  StepTimer exchange_timer;
  alive_ = ch.exchange(std::move(mine), ok(), &st_.dir);
  exchange_us_ = exchange_timer.micros();
  if (!alive_) fail_after(ch, "before the exchange");
  check_stop();
  bool exchanged = alive_;
  stage(ch, "bring-up", [&] {
    if (std::string why = wire_unsupported_reason(st_, log_, p_); !why.empty()) {
      log_.add(report::step_line(st_.host, "bring-up", "wire", st_.host, report::StepStatus::Skipped, why));
      log_.verdict = report::Verdict::Unsupported;
      log_.reason = why;
      return;
    }
    // An external peer's values come from its own exchange, before the RTR that reads them.
    if (!run_external_steps(plan::StepKind::ExternalExchange)) return;
    close_window();
    if (ok()) run_external_steps(plan::StepKind::ExternalReply);
    if (ok() && create_started_) {
      log_.bringup_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - first_create_).count();
      st_.qps.for_each([&](plan::QpId, const QpState& q) { log_.qps_at_rts += q.state == spec::QpState::RTS; });
    }
  });
  if (!ok()) externals_.close_all();  // a tool waiting on its connection learns it now
  bringup_.name_lines(st_, log_);
  if (exchanged) log_published();
  if (alive_) report_barrier(setup_step(plan::StepKind::Barrier));
  publish_lines();
  // The timeline, stage by stage, as the plan lists it: this host's steps, then the meeting.
  std::vector<std::vector<const plan::Step*>> by_stage(p_.stages.size());
  if (plan_)
    for (const auto& step : plan_->steps)
      if (step.stage >= 0) by_stage[static_cast<size_t>(step.stage)].push_back(&step);
  size_t faults_off = last_workload_stage(p_);
  for (size_t k = 0; k < by_stage.size(); ++k) {
    if (stage(ch, p_.stages[k], [&] { run_stage(by_stage[k]); }))
      for (const auto* step : by_stage[k])
        if (step->kind == plan::StepKind::Barrier) report_barrier(step->index);
    if (k == faults_off) traffic_faults_.reset();
    publish_lines();
  }
  // The cleanup's lines (faults off, links up) report on the latest step that reported: they
  // come after every line published so far, in plan order.
  log_.current_step = log_.latest_step();
  traffic_faults_.reset();
  whole_run_faults.reset();  // before the devices close: it reads their counters
  links_.reset();            // a link a step took down is up again before the objects go
  record_counter_deltas();
  if (plan_) {
    for (const auto& step : plan_->steps) {
      if (step.kind == plan::StepKind::PacketEventsEnd) events_.disarm(st_, log_, step.index);
      else if (step.kind == plan::StepKind::CaptureEnd) captures_.stop(st_, log_, p_, step.index);
    }
  }
  // Whether the run stopped is settled here: a stop that comes during teardown does not make
  // the run's steps "not run".
  bool stopped = plan_ && !ok();
  if (stopped) mark_unrun_steps(log_, *plan_, UnrunPart::BeforeTeardown);
  teardown();
  if (stopped) mark_unrun_steps(log_, *plan_, UnrunPart::Teardown);
  publish_lines();
  if (o_.live) o_.live->host_done(st_.host);
  return log_;
}

void HostSession::publish_lines() {
  // A run that has stopped: the steps it skipped below the latest one that reported (bring-up
  // threads ran some QPs' steps past a failure) get their not-run lines now, or they would
  // come after that step's lines; the others once the run's cleanup has added its lines.
  if (plan_ && !ok()) mark_unrun_steps(log_, *plan_, UnrunPart::BeforeTeardown, log_.latest_step());
  log_.order_new_lines();  // what is published is in plan order and never moves
  if (!o_.live) return;
  o_.live->lines(st_.host, log_.steps, published_, log_.steps.size());
  published_ = log_.steps.size();
}

// Every hw_counter of every device this host opened, at open and now (the HTML report's table).
void HostSession::record_counter_deltas() {
  for (const auto& [id, before] : counters_at_open_) {
    const DeviceState* device = st_.devices.find(id);
    if (!device) continue;
    const auto& ds = *device;
    std::string where = ds.ctx().device_name() + " port " + std::to_string(ds.ctx().port());
    for (const auto& [counter, after] : read_hw_counters(ds)) {
      auto b = before.find(counter);
      log_.counters.push_back({st_.host, where, counter, b == before.end() ? 0 : b->second, after});
    }
  }
}

// Faults `during: traffic` come off after this stage (any host's last workload).
size_t last_workload_stage(const plan::Plan& p) {
  size_t last = SIZE_MAX;
  for (const auto& h : p.hosts)
    for (const auto& step : h.steps)
      if (step.kind == plan::StepKind::Workload && (last == SIZE_MAX || static_cast<size_t>(step.stage) > last))
        last = static_cast<size_t>(step.stage);
  return last;
}

report::RunReport merge_reports(const std::string& name, const std::string& file, std::vector<report::RunReport>& parts,
                                const std::vector<std::string>& hosts) {
  report::RunReport all;
  all.scenario = name;
  all.file = file;
  // The run's verdict and reason: the worst host's, severity error > fail > unsupported > pass,
  // the first within a level. An echo of another host's failure ("aborted: host b failed: ...")
  // is never the root cause while some host reported one of its own, at whatever level: a host
  // aborted because its peer could not run the scenario makes the run unsupported, not failed.
  auto rank = [](report::Verdict v) {
    return v == report::Verdict::Error ? 3 : v == report::Verdict::Fail ? 2 : v == report::Verdict::Unsupported ? 1 : 0;
  };
  std::optional<size_t> root;
  for (bool echoes : {false, true}) {
    for (size_t i = 0; i < parts.size(); ++i)
      if (parts[i].verdict != report::Verdict::Pass && is_echo(parts[i].reason) == echoes &&
          (!root || rank(parts[i].verdict) > rank(parts[*root].verdict)))
        root = i;
    if (root) break;
  }
  if (root) {
    all.verdict = parts[*root].verdict;
    all.reason = (parts.size() > 1 ? "host " + hosts[*root] + ": " : "") + parts[*root].reason;
  }
  for (auto& p : parts) {
    for (auto& step : p.steps) all.steps.push_back(std::move(step));
    for (auto& d : p.disagreements) all.disagreements.push_back(std::move(d));
    for (auto& c : p.counters) all.counters.push_back(std::move(c));
    for (auto& q : p.wire) all.wire.push_back(std::move(q));
    if (!p.device.empty() && all.device.find(p.device) == std::string::npos)
      all.device += (all.device.empty() ? "" : ", ") + p.device;
    all.qps_at_rts += p.qps_at_rts;
    all.bringup_seconds = std::max(all.bringup_seconds, p.bringup_seconds);
  }
  return all;
}

report::StepResult& run_step(report::RunReport& log, const std::string& host, const std::string& phase, const std::string& verb,
                             const std::string& object, const std::string& detail, const std::function<void()>& fn) {
  report::StepResult r;
  r.host = host;
  r.phase = phase;
  r.verb = verb;
  r.object = object;
  r.detail = detail;
  set_outcome(r, timed_step(log, verb, object, fn));
  return log.add(std::move(r));
}

report::RunReport run_scenario(const plan::Plan& p, const RunOptions& options) {
  RunOptions o = options;
  for (const auto& h : p.hosts)
    if (h.address != "localhost" && h.address != "127.0.0.1" && h.address != "::1" && h.address != "local" &&
        !o.all_hosts_local) {
      report::RunReport r;
      r.scenario = p.scenario;
      r.file = p.file;
      r.verdict = report::Verdict::Error;
      r.reason = "host '" + h.host + "' is at " + h.address +
                 ": a remote host runs through its agent (`qpo run` starts one, or reaches `qpo agent --listen`), "
                 "not in this process; --local runs every host here";
      return r;
    }
  const auto& hosts = p.active_hosts;
  o.hosts_here = hosts.size();
  InProcessChannel channel(
      hosts, std::chrono::milliseconds(hosts.size() > 1 ? (o.meeting_timeout_ms ? o.meeting_timeout_ms : o.phase_timeout_ms) : 0));
  std::vector<report::RunReport> parts(hosts.size());
  if (hosts.size() == 1) {
    parts[0] = HostSession(p, hosts[0], o).run(channel.member(0));
  } else {
    // One thread per host: each blocks at the stages until the others arrive. This thread
    // watches the phase timeout for a round where every host is busy (and nobody waits).
    std::mutex m;
    std::condition_variable cv;
    size_t finished = 0;
    // A host that cannot run (no thread for it, or an exception out of its session) ends with
    // an error report of its own; the others meet its absence at their next stage.
    auto host_error = [&](size_t i, const std::string& why) {
      report::RunReport r;
      r.scenario = p.scenario;
      r.file = p.file;
      r.verdict = report::Verdict::Error;
      r.reason = "host '" + hosts[i] + "': " + why;
      return r;
    };
    auto done = [&] {
      std::lock_guard lock(m);
      ++finished;
      cv.notify_all();
    };
    util::ThreadGroup threads;
    for (size_t i = 0; i < hosts.size(); ++i) {
      auto not_started = threads.start([&, i] {
        try {
          parts[i] = HostSession(p, hosts[i], o).run(channel.member(i));
        } catch (const std::exception& e) {
          try {
            parts[i] = host_error(i, e.what());
          } catch (...) {  // out of memory for the message: the verdict still says Error
            parts[i].verdict = report::Verdict::Error;
          }
        } catch (...) {
          parts[i].verdict = report::Verdict::Error;
        }
        done();  // always: this thread waits for every host to be done
      });
      if (not_started) {
        parts[i] = host_error(i, *not_started);
        done();
      }
    }
    {
      std::unique_lock lock(m);
      while (!cv.wait_for(lock, std::chrono::milliseconds(500), [&] { return finished == hosts.size(); }))
        channel.check_deadline();
    }
    threads.join();
  }
  return merge_reports(p.scenario, p.file, parts, hosts);
}

void request_stop() { g_stop = true; }
bool stop_requested() { return g_stop; }
const std::atomic<bool>& stop_flag() { return g_stop; }
bool stop_now(const RunState& st) {
  if (g_stop) return true;
  const StopRequest* r = st.channel ? st.channel->stop_request() : nullptr;
  return r && r->requested.load(std::memory_order_acquire);
}

}  // namespace qpo::exec
