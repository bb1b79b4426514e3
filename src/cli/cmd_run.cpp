// qpo run FILE: validate, plan, then execute on real devices (or in the Soft-RoCE lab).
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <limits>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/html_report.h"
#include "cli/input.h"
#include "cli/lab.h"
#include "cli/run_pmix.h"
#include "cli/lab_hosts.h"
#include "cli/lab_peer.h"
#include "cli/matrix_check.h"
#include "cluster/controller.h"
#include "cluster/launch.h"
#include "exec/executor.h"
#include "exec/host_session.h"
#include "check/validate.h"
#include "plan/declared_waits.h"
#include "plan/plan.h"
#include "report/run_report.h"
#include "util/output_file.h"
#include "util/strings.h"

namespace qpo::cli {

namespace {
void on_sigint(int) {
  exec::request_stop();
  cluster::request_abort();
}

// --local puts every host on this machine: a fault between hosts that then share one device
// is an error (Q511), printed like validation's. Returns the exit code to stop with, or 0.
int refuse_local_faults(LoadedScenario& l, const OutputOptions& out, const std::string& file) {
  diag::DiagSink extra;
  check::check_local_faults(*l.scenario(), extra);
  if (!extra.has_errors()) return 0;
  for (const auto& d : extra.all()) l.diags.add(d);
  if (out.format == "json") {
    util::JsonWriter json;
    json.begin_object().key("files").begin_array();
    render_file_json(json, file, l, true);
    json.end_array().end_object();
    std::cout << json.str() << "\n";
  }
  diag::Sources sources;
  if (l.source) sources[l.source->name()] = l.source.get();
  for (const auto& d : extra.all()) std::cerr << diag::render_text(d, sources, out.color) << "\n";
  std::cerr << util::printable(file, 1000) << ": not running it with --local\n";
  return 1;
}
}  // namespace

Action add_run(CLI::App& app) {
  struct Options {
    std::string file;
    OutputOptions out;
    bool lab = false, no_lab = false, verbose = false, no_smoke = false, local = false, agents = false, pmix = false;
    int timeout_ms = 5000;
    int phase_timeout_s = 120;
    unsigned bringup_threads = exec::RunOptions::kDefaultBringupThreads;
    CLI::Option* phase_timeout = nullptr;  // given on the command line, or the default scaled by QPs
    std::string agent_command = "qpo", token_file;
    std::vector<std::string> overrides;
    std::string report_file, results_file, events_file;  // --report, --results, --events
    std::string capture_dir;  // --capture
    std::string lab_peer;  // --lab-peer: a shell command in the lab's guest b (cli/lab_peer.h)
    bool skip_externals = false;  // --skip-externals (qpo test's)
    int lab_peer_grace_s = kLabPeerGraceSeconds;
  };
  auto opts = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("run", "Bring the scenario up on real RDMA devices, move traffic, tear down");
  cmd->footer(
      "Validates first (errors stop the run, exit 1). Then, per host in plan order: opens devices,\n"
      "creates PD/MR/CQ/SRQ/QP, drives every transition with exactly the planned attr_mask and\n"
      "checks it with ibv_query_qp, runs a smoke exchange (SEND/RECV and RDMA WRITE, data checked)\n"
      "and the scenario's workloads, then its extra transitions, and destroys everything in reverse.\n"
      "A transition the scenario expects to fail must fail with that errno. A prediction of the rule\n"
      "tables that the kernel contradicts is printed as a DISAGREEMENT.\n\n"
      "Without an RDMA device on this host, qpo runs the scenario in the built-in Soft-RoCE lab (a\n"
      "QEMU guest with rdma_rxe; see scripts/lab/README.md), as if --lab was given. A scenario with\n"
      "two hosts gets two guests joined by the lab's link, one host in each (the hosts' addresses\n"
      "are replaced there: guest a runs the controller, guest b an agent); --local keeps every host\n"
      "on one device in one guest, where a fault between hosts is an error (Q511).\n\n"
      "Each step's line is printed when the step is final: bring-up's at the end of the bring-up\n"
      "(its lines are kept out of the timed window), then each stage's as the stage ends; with\n"
      "--events FILE the same steps go to FILE as JSON lines as they come (then a verdict line).\n\n"
      "--lab-peer CMD tests qpo against a stock tool on \"the other machine\": the lab's two guests\n"
      "run the scenario (every host) in guest a, 10.0.1.1 / fd00:1::1, and `sh -c CMD` in guest b,\n"
      "10.0.1.2 / fd00:1::2, rxe0 on eth0 in each, both started together. The peer's output comes\n"
      "on stderr, each line prefixed [peer], and the run ends with `lab peer: exit S: CMD`. The peer\n"
      "never stops qpo; after qpo ended it may run --lab-peer-grace seconds more, then it is stopped.\n"
      "A QP of the scenario may connect to that tool (`externals:`, README: Interop): e.g. qpo as\n"
      "ibv_rc_pingpong's or ib_write_bw's client, the tool serving in guest b, speaking the tool's\n"
      "own TCP exchange (exchange: ibv_pingpong or perftest).\n\n"
      "Exit status: 0 pass, 1 fail or invalid scenario, 2 usage or system error, 77 unsupported by\n"
      "device (e.g. XRC on rxe; reported with the reason, never as a pass); from the lab, 124 timed\n"
      "out and 125 the lab failed. With --lab-peer: qpo's own status when the scenario failed; when\n"
      "it passed, 1 if the peer exited non-zero or was still running after the grace time (125 if\n"
      "the lab failed in guest b).\n\n"
      "Example:\n  qpo run scenarios/rc-write-pair.yaml\n  qpo run --lab --format json scenarios/ud-pair.yaml\n"
      "  qpo run --lab-peer 'ibv_rc_pingpong -d rxe0 -g 1' scenarios/interop/ibv-rc-pingpong-client.yaml\n"
      "  qpo run --lab-peer 'ib_write_bw -d rxe0 -x 1 -s 65536 -n 200' scenarios/interop/ib-write-bw-client.yaml");
  cmd->add_option("file", opts->file, "Scenario file")->required();
  add_output_options(*cmd, opts->out);
  add_set_option(*cmd, opts->overrides);
  cmd->add_flag("--lab", opts->lab, "Run inside the Soft-RoCE lab guest even if this host has RDMA devices");
  cmd->add_flag("--no-lab", opts->no_lab, "Never use the lab; fail when this host has no RDMA device");
  auto* lab_peer = cmd->add_option("--lab-peer", opts->lab_peer,
                                   "Run the scenario in the lab with CMD (a shell command line) beside it on a second "
                                   "machine: guest b (10.0.1.2, fd00:1::2), rxe0 on eth0; implies --lab")
                       ->type_name("CMD");
  cmd->add_option("--lab-peer-grace", opts->lab_peer_grace_s,
                  "Seconds the --lab-peer command may go on after qpo ended before it is stopped")
      ->check(CLI::Range(0, 3600))
      ->needs(lab_peer)
      ->capture_default_str();
  cmd->add_flag("-v,--verbose", opts->verbose, "Also print informational steps (granted caps, published values)");
  cmd->add_flag("--no-smoke", opts->no_smoke, "Skip the smoke exchange after bring-up");
  cmd->add_flag("--local", opts->local,
                "Run every host of the scenario on this machine, whatever its address says: one thread per "
                "host, or with --agents one local agent process per host");
  auto* agents = cmd->add_flag("--agents", opts->agents,
                "Run every host through an agent process, also localhost ones (as a multi-host run would)");
  cmd->add_flag("--pmix", opts->pmix,
                "This process is one rank of a job a cluster launcher started (mpirun -np N, srun --mpi=pmix -n N), "
                "one rank per host of the scenario: rank r runs the r-th host (file order, hosts with a device) and "
                "the ranks exchange and meet through PMIx; rank 0 prints the merged report (README: Across hosts)")
      ->excludes(agents);
  opts->phase_timeout =
      cmd->add_option("--phase-timeout", opts->phase_timeout_s,
                      "Seconds any host of a multi-host run (agents or --local) may take to reach the next stage "
                      "or meeting round before the run is torn down; default 120 s plus 0.25 s per QP of the "
                      "scenario (a stage such as the smoke exchange goes QP by QP); the waits the scenario declares "
                      "(an expected rdma_cm event's `within`, or the phase timeout itself when it has none; an event's "
                      "`within`, or --timeout-ms; a pause; a script's `duration:` per size) come on top, the longest "
                      "stage's sum of them")
          ->check(timeout_range(kMaxTimeoutSeconds, "seconds"))
          ->capture_default_str();
  cmd->add_option("--agent-command", opts->agent_command, "Command ssh runs on remote hosts")->capture_default_str();
  cmd->add_option("--token-file", opts->token_file, "Shared secret for tcp:// agents (qpo agent --listen)");
  // At most a day: scripts wait a few times this long in one call, in int milliseconds.
  cmd->add_option("--timeout-ms", opts->timeout_ms, "Wait at most this long for each completion or event")
      ->check(timeout_range(86400000, "milliseconds"))
      ->capture_default_str();
  cmd->add_option("--bringup-threads", opts->bringup_threads,
                  "Threads per host that create and modify its QPs in the bring-up, each taking every Nth QP; "
                  "the report lists the steps in plan order whatever they did. 1 makes every call in plan order "
                  "on one thread. A host with fewer than 16 QPs per thread uses fewer")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  // qpo test's: a scenario whose peer is a stock tool it does not start is valid, not runnable.
  cmd->add_flag("--skip-externals", opts->skip_externals,
                "Exit 77 (skip) after validating a scenario with externals: instead of waiting for its tool")
      ->group("");
  cmd->add_option("--report", opts->report_file,
                  "Also write the run as one self-contained HTML page here: scenario, plan steps with outcome "
                  "and time, latency histograms and CDFs, bandwidth plots, counter deltas (README: Report)");
  cmd->add_option("--results", opts->results_file,
                  "Also write the JSON results (what --format json prints) to this file, whatever --format prints: "
                  "for qpo compare, qpo report, and qpo test's baselines and report");
  cmd->add_option("--capture", opts->capture_dir,
                  "Record each host's RoCEv2 packets (UDP 4791) on its devices' netdevs into pcap files in this "
                  "directory (SCENARIO.HOST.NETDEV.pcap, with the run's QPs in FILE.qps.json beside each), from before "
                  "the first QP to teardown; `qpo packets FILE` lists them, Wireshark and tshark read them. Two QPs on "
                  "one device never reach a netdev (Soft-RoCE loops them back): capture two hosts");
  cmd->add_option("--events", opts->events_file,
                  "Also write the run as it goes as JSON lines: one per step (as the JSON report lists it, "
                  "\"event\": \"step\") when it is final, then {\"event\": \"end\", \"verdict\", ...}; "
                  "'-' writes them to standard output instead of the text log");
  return [opts]() {
    if (opts->pmix) {
      // A rank runs one host where the launcher put it and rank 0 prints: nothing else yet.
      for (auto [given, option] : {std::pair{opts->local, "--local"}, std::pair{opts->lab, "--lab"},
                                   std::pair{!opts->lab_peer.empty(), "--lab-peer"},
                                   std::pair{!opts->report_file.empty(), "--report"},
                                   std::pair{!opts->results_file.empty(), "--results"},
                                   std::pair{!opts->events_file.empty(), "--events"},
                                   std::pair{!opts->capture_dir.empty(), "--capture"}})
        if (given) {
          std::cerr << "qpo: " << option << " does not go with --pmix (each rank runs one host where the launcher "
                       "put it; rank 0 prints the merged report: redirect it, or use --format json)\n";
          return static_cast<int>(kSystemError);
        }
    }
    if (!opts->lab_peer.empty() && opts->no_lab) {
      std::cerr << "qpo: --lab-peer runs the scenario and its peer command in the Soft-RoCE lab's two guests; "
                   "--no-lab refuses the lab: give one of them\n";
      return static_cast<int>(kSystemError);
    }
    std::unique_ptr<LoadedScenario> l;
    if (int code = load_valid(opts->file, opts->out, "not running it", &l, opts->overrides)) return code;
    if (opts->overrides.empty()) note_unused_matrix(opts->file);
    if (opts->skip_externals && !l->scenario()->externals.empty()) {
      std::cout << "SKIP " << l->scenario()->name << ": talks to external peer '" << l->scenario()->externals[0].name
                << "', a stock tool qpo test does not start: run it with the tool (qpo run --lab-peer 'TOOL' FILE, "
                   "README: Interop)\n";
      return 77;
    }
    if (opts->local)
      if (int code = refuse_local_faults(*l, opts->out, opts->file)) return code;
    // 1,000 QPs' smoke stage took 31-42 s in the lab under load (~40 ms per QP): a fixed 120 s
    // would fail big scenarios on a busy machine, 0.25 s per QP leaves them room.
    if (opts->phase_timeout->count() == 0) opts->phase_timeout_s = 120 + static_cast<int>(l->scenario()->qps.size() / 4);
    if (opts->no_lab && !opts->lab) {
      // Only a host that runs on this machine opens a device here (remote ones go to agents).
      bool here = opts->local;
      for (const auto& h : l->scenario()->hosts)
        here |= cluster::is_local_address(h.address);
      if (here) say_if_no_device("running");
    }
    // Under a launcher the rank runs where the launcher put it: no lab of its own.
    if (!opts->pmix && use_lab(opts->lab || !opts->lab_peer.empty(), opts->no_lab, "running")) {
      std::vector<std::string> args{"--format", opts->out.format, "--timeout-ms", std::to_string(opts->timeout_ms),
                                    "--phase-timeout", std::to_string(opts->phase_timeout_s),
                                    "--bringup-threads", std::to_string(opts->bringup_threads)};
      if (opts->verbose) args.push_back("--verbose");
      if (opts->no_smoke) args.push_back("--no-smoke");
      for (const auto& o : opts->overrides) args.insert(args.end(), {"--set", o});
      // Files the guest writes go to lab.sh's --out folder, the same path on both sides: one
      // folder for all of them.
      std::vector<std::string> lab_args;
      if (opts->events_file == "-") args.insert(args.end(), {"--events", "-"});
      std::string events_file = opts->events_file == "-" ? "" : opts->events_file;
      for (auto [option, given] : {std::pair{"--report", &opts->report_file}, std::pair{"--events", &events_file},
                                   std::pair{"--results", &opts->results_file}}) {
        std::string file = absolute_report_path(*given);
        if (file.empty()) continue;
        args.insert(args.end(), {option, file});
        if (!lab_args.empty() && lab_args != report_lab_args(file)) {
          std::cerr << "qpo: in the lab, --report, --results and --events must name files in one directory\n";
          return static_cast<int>(kSystemError);
        }
        lab_args = report_lab_args(file);
      }
      if (!opts->capture_dir.empty()) {
        std::string dir = absolute_report_path(opts->capture_dir);
        std::error_code ec;
        std::filesystem::create_directories(dir, ec);
        args.insert(args.end(), {"--capture", dir});
        std::vector<std::string> out{"--out", dir};
        if (!lab_args.empty() && lab_args != out) {
          std::cerr << "qpo: in the lab, --report, --results and --events go in the --capture directory (the one "
                       "folder the guests write)\n";
          return static_cast<int>(kSystemError);
        }
        lab_args = out;
      }
      auto hosts = l->scenario()->active_hosts();
      if (!opts->lab_peer.empty())
        return run_with_lab_peer({opts->lab_peer, opts->lab_peer_grace_s, hosts, opts->local, opts->agents, args,
                                  opts->file, lab_args});
      // Two hosts without --local: one guest each, joined by the lab's link (cli/lab_hosts.h).
      if (!opts->local && hosts.size() > 1) {
        if (opts->file == "-") {
          std::cerr << "qpo: a multi-host scenario runs in two lab guests, which cannot read it from standard "
                       "input; give a file\n";
          return static_cast<int>(kSystemError);
        }
        std::vector<std::string> addresses;
        for (const auto& h : hosts) addresses.push_back(l->scenario()->host(h)->address);
        return run_hosts_in_lab(hosts, addresses, args, opts->file, lab_args, lab_cm_addresses(l->checked->model(), hosts));
      }
      if (opts->local) args.push_back("--local");
      if (opts->agents) args.push_back("--agents");
      args.insert(args.begin(), {"run", "--no-lab"});
      args.push_back(opts->file);
      return run_in_lab(args, lab_args);
    }
    if (!opts->capture_dir.empty()) {
      std::error_code ec;
      std::filesystem::create_directories(opts->capture_dir, ec);
      if (!std::filesystem::is_directory(opts->capture_dir)) {
        std::cerr << "qpo: --capture: " << util::printable(opts->capture_dir, 1000) << " is not a directory qpo can make"
                  << (ec ? " (" + ec.message() + ")" : "") << "\n";
        return static_cast<int>(kSystemError);
      }
    }
    auto p = plan::build_plan(*l->checked, {.smoke = !opts->no_smoke, .capture = !opts->capture_dir.empty()});
    // A host inside a wait the scenario declares (an expected CM event's `within: 150s`) is on
    // time: the phase timeout counts beyond the longest of them.
    plan::WaitDefaults waits{static_cast<uint64_t>(opts->phase_timeout_s) * 1000, static_cast<uint64_t>(opts->timeout_ms)};
    int64_t meeting_timeout_ms = int64_t{opts->phase_timeout_s} * 1000 + static_cast<int64_t>(plan::longest_stage_wait_ms(p, waits));
    meeting_timeout_ms = std::min<int64_t>(meeting_timeout_ms, std::numeric_limits<int>::max());
    exec::RunOptions ro;
    ro.timeout_ms = opts->timeout_ms;
    ro.smoke = !opts->no_smoke;
    ro.all_hosts_local = opts->local;
    ro.phase_timeout_ms = opts->phase_timeout_s * 1000;
    ro.meeting_timeout_ms = static_cast<int>(meeting_timeout_ms);
    ro.bringup_threads = opts->bringup_threads;
    ro.capture_dir = opts->capture_dir.empty() ? "" : std::filesystem::absolute(opts->capture_dir).string();
    ro.stdout_is_log = opts->out.format != "json" && opts->events_file != "-";
    struct sigaction sa {};
    sa.sa_handler = on_sigint;
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
    signal(SIGPIPE, SIG_IGN);  // an agent that died is an error to report, not a reason to die
    if (opts->pmix)
      return run_under_pmix(*l, p, ro,
                            {.format = opts->out.format,
                             .verbose = opts->verbose,
                             .meeting_timeout_s = static_cast<int>((meeting_timeout_ms + 999) / 1000)});
    bool remote = false;
    for (const auto& h : l->scenario()->hosts) remote |= !cluster::is_local_address(h.address) || !h.launcher.empty();
    if (opts->events_file == "-" && opts->out.format == "json") {
      std::cerr << "qpo: --events - and --format json both write to standard output; give --events a file\n";
      return static_cast<int>(kSystemError);
    }
    util::OutputStream events;
    std::string why;
    if (!opts->events_file.empty() && !events.open(opts->events_file, &why)) {
      std::cerr << "qpo: --events: " << why << "\n";
      return static_cast<int>(kSystemError);
    }
    // The text log goes to the terminal unless stdout carries JSON (--format json, --events -).
    bool text = opts->out.format != "json" && opts->events_file != "-";
    auto show = [&](const report::StepResult& s) {
      if (text) std::cout << report::render_step_text(s, opts->verbose) << std::flush;
      if (events.is_open()) events.write(report::render_step_event(s) + "\n");
    };
    report::LiveLog live(l->scenario()->active_hosts(), show);
    report::RunReport report;
    if ((remote && !opts->local) || opts->agents) {
      cluster::ControllerOptions co;
      co.run = ro;
      co.phase_timeout_ms = static_cast<int>(meeting_timeout_ms);
      co.agent_command = opts->agent_command;
      co.all_local = opts->local;
      co.overrides = opts->overrides;
      if (opts->verbose) co.log = &std::cerr;
      co.live = &live;
      char self[PATH_MAX];
      ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
      co.self_path = n > 0 ? std::string(self, static_cast<size_t>(n)) : "qpo";
      if (!opts->token_file.empty()) {
        std::string why;
        if (!cluster::read_token_file(opts->token_file, &co.token, &why)) {
          std::cerr << "qpo: --token-file: " << why << "\n";
          return static_cast<int>(kSystemError);
        }
      }
      report = cluster::run_with_agents(l->source->text(), *l->scenario(), co);  // lines shown as they came
    } else {
      ro.live = &live;
      report = exec::run_scenario(p, ro);
    }
    report.overrides = opts->overrides;
    if (events.is_open() && !events.write(report::render_end_event(report) + "\n"))
      std::cerr << "qpo: --events: " << util::printable(opts->events_file, 1000) << ": cannot write\n";
    if (opts->out.format == "json") {
      util::JsonWriter w;
      report::render_json(w, report);
      std::cout << w.str() << "\n";
    } else if (text) {
      std::cout << report::render_summary_text(report);
    }
    if (!opts->results_file.empty()) {
      util::JsonWriter w;
      report::render_json(w, report);
      if (!write_report_file(opts->results_file, w.str() + "\n", "--results")) return static_cast<int>(kSystemError);
    }
    if (!opts->report_file.empty() &&
        !write_report_file(opts->report_file, report::render_html(report, l->source ? l->source->text() : "")))
      return static_cast<int>(kSystemError);
    return report::exit_code(report);
  };
}

}  // namespace qpo::cli
