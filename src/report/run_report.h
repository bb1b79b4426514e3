#pragma once
// What a run did, step by step, and its verdict. Filled by the executor; rendered as a
// concise log (text) or JSON. Kept free of verbs types so every layer can use it.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "report/latency_distribution.h"
#include "util/json_writer.h"

namespace qpo::report {

// NotRun: a planned step the run never reached (it stopped, failed or was aborted first), or a
// teardown step whose object was never made (exec/unrun_steps.h).
enum class StepStatus { Ok, Failed, ExpectedFailure, Skipped, Warning, Info, NotRun };
const char* status_name(StepStatus s);
// Every status, for readers of status names (the cluster codec): the one table of names is
// status_name's.
inline constexpr StepStatus kStepStatuses[] = {StepStatus::Ok,      StepStatus::Failed, StepStatus::ExpectedFailure,
                                               StepStatus::Skipped, StepStatus::Warning, StepStatus::Info,
                                               StepStatus::NotRun};

// A plain value of a workload's results, and named groups of them (kept in name order).
using Scalar = std::variant<bool, int64_t, double, std::string>;
using Fields = std::vector<std::pair<std::string, Scalar>>;
// The value of `key` in `f` as a number (integers converted); nullopt when absent or text.
std::optional<double> field_number(const Fields& f, const std::string& key);

// One threshold of a script workload, judged against its summary.
struct ThresholdResult {
  std::string name;                // min_bw
  std::string field;               // bw_avg
  std::string unit;                // MB/s: limit and measured are in this unit
  double limit = 0;
  std::optional<double> measured;  // nullopt: the summary has no such field (a failure)
  bool passed = false;
  std::string message;             // "bw_avg 38.2 MB/s < min_bw 40 MB/s"
};

// What a script workload measured, as its report() summarised it: perftest's fields and
// units for the built-ins (bw_avg MB/s with MB = 2^20, msg_rate Mpps, latencies in usec).
struct WorkloadResult {
  std::string name, script;
  Fields summary;                  // the summary's plain top-level fields (not runs, not text)
  std::vector<Fields> runs;        // summary.runs: one per message size of a sweep
  std::string table;               // summary.text: the perftest-style table
  std::vector<ThresholdResult> thresholds;
  Fields quality;                  // measurement_quality.h: host load while it ran, sample spread
  // An op workload on a QP group: the group's name, on each member's results and on the
  // aggregate of them all (aggregate = true: bytes of every member over the longest time).
  std::string group;
  bool aggregate = false;
  // Latency samples for plots, one per run that kept them (a sweep: one per size).
  std::vector<LatencyDistribution> latency;
};

// How much a device port's hw_counter grew over the run (read after open, before teardown).
struct CounterDelta {
  std::string host, device;  // device: "rxe0 port 1"
  std::string name;
  uint64_t before = 0, after = 0;
};

struct StepResult {
  int plan_step = 0;       // the plan step this line reports on (`qpo plan` numbers); 0 = none
  std::string host;
  std::string phase;
  std::string verb;
  std::string object;
  std::string detail;      // "INIT->RTR mask=0x129181 (IBV_QP_STATE|...)"
  StepStatus status = StepStatus::Ok;
  // It closes its plan step: after every other line of the step, whenever those come (an
  // abort, taken before the bring-up window's lines are named).
  bool closes_step = false;
  int err = 0;             // errno when the verb failed
  double micros = 0;
  std::string message;     // why it failed, or what was checked
  // A script workload's results. A pointer keeps the other 10^4 steps of a big bring-up small.
  std::shared_ptr<const WorkloadResult> workload;
};

// A QP's packets with its peer as its host's capture saw them (`wire:` in the scenario), for
// the HTML report's sequence diagram: requests to the peer, responses back, in capture order.
struct WirePacket {
  double t_us = 0;         // since the sequence's first packet
  bool to_peer = true;     // a request (or qpo's own ACK) the QP sent; false: what came back
  std::string what;        // "RC RDMA Write Middle"
  uint32_t psn = 0;
  std::string note;        // "RETX 1", "NAK PSN sequence error", "ACK msn 1", "ECN-CE"
};
struct WireSequence {
  std::string host, qp, peer;
  std::vector<WirePacket> packets;  // the first kMaxPackets
  size_t total = 0;                 // packets between the two in the capture
  std::vector<std::string> events;  // the packet events on the QP, as the plan describes them
  static constexpr size_t kMaxPackets = 200;
};

enum class Verdict { Pass, Fail, Unsupported, Error };
const char* verdict_name(Verdict v);

struct RunReport {
  std::string scenario, file;
  std::string device;      // device names used, for the summary
  std::vector<StepResult> steps;
  Verdict verdict = Verdict::Pass;
  std::string reason;      // one line: why not pass
  std::vector<std::string> disagreements;  // rule-table predictions the kernel contradicted
  std::vector<std::string> overrides;      // `--set PATH=VALUE` applied to the scenario, in order
  // Bring-up speed: from the first ibv_create_qp to the last bring-up ibv_modify_qp.
  size_t qps_at_rts = 0;
  double bringup_seconds = 0;
  std::vector<CounterDelta> counters;      // every hw_counter of every device used, in name order
  std::vector<WireSequence> wire;          // per QP a `wire:` entry names, its packets with its peer

  // The plan step the executor is on: lines added without one report on it.
  int current_step = 0;

  // The log has a place per plan step: a line is added to the place of its plan step (a line
  // without one, while no step is current, to the place of the latest line before it), in
  // whatever order the steps finish (bring-up threads, lines named after the bring-up window).
  // order_new_lines() puts the lines added since its last call in their places - plan order;
  // a step's lines in the order they came - and exec calls it wherever it publishes lines (a
  // stage's end): lines already published never move.
  StepResult& add(StepResult s) {
    if (!s.plan_step) s.plan_step = current_step;
    latest_step_ = std::max(latest_step_, s.plan_step);
    steps.push_back(std::move(s));
    return steps.back();
  }
  void order_new_lines();
  // The highest plan step any line so far reports on.
  int latest_step() const { return latest_step_; }

  void fail(const std::string& why) {
    if (verdict == Verdict::Pass) {
      verdict = Verdict::Fail;
      reason = why;
    }
  }

 private:
  size_t ordered_ = 0;     // steps[0, ordered_) are in their places
  int placed_step_ = 0;    // the place of steps[ordered_ - 1]
  int latest_step_ = 0;
};

// One line per step: "  12 bring-up  ibv_modify_qp  qa  INIT->RTR mask=...  ok  35 us";
// a script workload's step is followed by its table and thresholds. Info lines, and the
// not-run lines after the first of a batch (the one whose message counts them), show only
// when verbose.
std::string render_text(const RunReport& r, bool verbose);
// render_text's parts: one step's line(s) ("" for an info line unless verbose), and what follows
// the steps (disagreements, the bring-up rate, --set echoes, the verdict line last).
std::string render_step_text(const StepResult& s, bool verbose);
std::string render_summary_text(const RunReport& r);
// `qpo run --events`: one JSON object per line. A step as the JSON report lists it, with
// "event": "step" (and its "workload" when it ran one); the last line "event": "end" with the
// verdict, its reason and the exit code.
std::string render_step_event(const StepResult& s);
std::string render_end_event(const RunReport& r);
// A step's fields as the JSON report's "steps" entries hold them (inside an open object).
void render_step_fields(util::JsonWriter& w, const StepResult& s);
// The steps, plus "workloads": every script workload's results as structured JSON.
void render_json(util::JsonWriter& w, const RunReport& r);
// A measured value as messages print it: 38.2, 0.001065, 12500.
std::string format_number(double v);
// Process exit code: 0 pass, 1 fail, 77 unsupported (ctest's skip code), 2 error.
int exit_code(const RunReport& r);

}  // namespace qpo::report
