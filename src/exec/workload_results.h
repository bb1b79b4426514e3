#pragma once
// What a script workload's run means for the report: its summary as structured results (the
// perftest-style table, the fields, one entry per size), and its thresholds judged against
// that summary. No devices here: pure functions of the workload's parameters and the script's result.
#include <string>
#include <vector>

#include "dataplane/stats.h"
#include "lua/value.h"
#include "report/run_report.h"
#include "plan/workload_run.h"
#include "util/threshold.h"

namespace qpo::exec {

// The summary's plain top-level fields, its `runs` and its `text` (the table).
report::WorkloadResult workload_result(const plan::WorkloadParams& w, const lua::Value& summary);

// One threshold against the summary: "bw_avg 38.2 MB/s < min_bw 40 MB/s" (missed),
// "p99 9.8 usec <= max_p99 12 usec" (passed), or "the summary has no 'p99'" (missed).
report::ThresholdResult judge(const util::Threshold& t, const lua::Value& summary);

// The run's verdict reason for the missed thresholds: "workload 'w': bw_avg 38.2 MB/s < min_bw
// 40 MB/s; ..."; empty when every threshold passed.
std::string missed_thresholds(const plan::WorkloadParams& w, const std::vector<report::ThresholdResult>& judged);

// The step's one-line message: the headline numbers ("BW average 66.54 MB/sec, 0.001065
// Mpps" or "t_typical 10.2 usec, p99 14.1 usec"), or "ok" when the summary has neither.
std::string headline(const lua::Value& summary);

// An op workload's results in the fields script workloads report (perftest's units: MB =
// 2^20 bytes, Mpps, usec): size, iterations, bytes, seconds, bw_peak, bw_avg, msg_rate, and
// each WR's post-to-completion time as t_min, t_max, t_typical (median), t_avg, p99, p999.
// `peak` (MB/sec, 0: not measured, and no bw_peak then) is its best moment - perftest's peak
// of its stream (dataplane::peak_ticks_per_op), or a tool's own - and bw_peak is never below
// bw_avg.
// `latency_us` is sorted in place.
report::Fields op_summary(uint64_t size, uint64_t iterations, double seconds, std::vector<double>& latency_us,
                          double peak = 0);

// An op workload on a QP group: its members that completed, together, in the same fields
// plus `qps`: the bytes of all of them over the longest member's time (dataplane::together,
// which the script built-ins' reports use too: they ran at once; the bandwidths are not
// summed, so a member that ran alone for part of the time does not inflate it), msg_rate
// likewise, and the latency figures from every member's WRs.
struct MemberRun {
  uint64_t iterations = 0;
  double seconds = 0;
  const std::vector<double>* latency_us = nullptr;
};
// `together`, when given, gets the same run as figures (for the group's line: no field read back).
// `peak`: the best moment of all of them together (their workers' timelines added up:
// op_workloads.cpp group_peak), not the sum of their peaks; 0 when not measured (no bw_peak).
report::Fields group_summary(uint64_t size, const std::vector<MemberRun>& members,
                             dataplane::BandwidthStats* together = nullptr, double peak = 0);

// One thread drives several QPs of a group (`workers:`: the lanes of one stream); one lane's
// error stops the thread and with it every lane. Which QP failed, and how: its line carries
// the error, each other lane's line says it did not finish because of that one.
struct LaneFailure {
  std::string qp;      // the scenario QP the error names; "" when it names none (a timeout, a pin)
  int wc_status = 0;   // a completion's IBV_WC_* status (not IBV_WC_SUCCESS)
  int err = 0;         // a post's errno
};
// True when `member`'s line is only a consequence of another lane's failure.
bool stopped_by_other_lane(const std::string& member, const LaneFailure& f);
// What `member`'s line says: the thread's `error` for the QP that failed (or when no QP is
// named), else "not finished: worker stopped after cli.393 failed (IBV_WC_REM_ACCESS_ERR)".
std::string lane_message(const std::string& member, const LaneFailure& f, const std::string& error);

}  // namespace qpo::exec
