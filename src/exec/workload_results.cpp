#include "exec/workload_results.h"

#include <algorithm>

#include "dataplane/stats.h"
#include "util/errno_names.h"
#include "util/wc_status_names.h"

namespace qpo::exec {

namespace {

std::optional<report::Scalar> scalar_of(const lua::Value& v) {
  switch (v.kind()) {
    case lua::Value::Kind::Bool: return report::Scalar(v.as_bool());
    case lua::Value::Kind::Int: return report::Scalar(v.as_int());
    case lua::Value::Kind::Number: return report::Scalar(v.as_number());
    case lua::Value::Kind::String: return report::Scalar(v.as_string());
    default: return std::nullopt;
  }
}

report::Fields plain_fields(const lua::Value& table, const char* skip_a = "", const char* skip_b = "") {
  report::Fields out;
  for (const auto& [k, v] : table.fields()) {
    if (k == skip_a || k == skip_b) continue;
    if (auto s = scalar_of(v)) out.emplace_back(k, *s);
  }
  return out;
}

std::string with_unit(double v, const std::string& unit) {
  return report::format_number(v) + (unit == "%" ? "" : " ") + unit;
}

// A run's `times` (every iteration's latency, usec: the latency built-ins keep them) as a
// histogram and CDF for the report.
void add_latency(report::WorkloadResult& out, const lua::Value& run) {
  const auto* times = run.find("times");
  if (!times || !times->is_table()) return;
  std::vector<double> us;
  for (const auto& v : times->array())
    if (v.is_number()) us.push_back(v.as_number());
  if (us.empty()) return;
  const auto* size = run.find("size");
  int64_t bytes = size && size->is_number() ? static_cast<int64_t>(size->as_number()) : 0;
  out.latency.push_back(report::latency_distribution(us, bytes));
}

}  // namespace

report::WorkloadResult workload_result(const plan::WorkloadParams& w, const lua::Value& summary) {
  report::WorkloadResult out;
  out.name = w.name;
  out.script = w.script;
  out.summary = plain_fields(summary, "text", "runs");
  if (const auto* runs = summary.find("runs"))
    for (const auto& run : runs->array())
      if (run.is_table()) {
        out.runs.push_back(plain_fields(run));
        add_latency(out, run);
      }
  if (const auto* text = summary.find("text"); text && text->is_string()) out.table = text->as_string();
  return out;
}

report::ThresholdResult judge(const util::Threshold& t, const lua::Value& summary) {
  report::ThresholdResult r;
  r.name = t.name;
  r.field = t.field;
  r.unit = t.unit;
  r.limit = t.limit * t.display_scale;
  std::string limit = t.name + " " + with_unit(r.limit, t.unit);
  const lua::Value* v = summary.find(t.field);
  if (!v || !v->is_number()) {
    r.message = summary.is_nil() ? "the script's report() returned no summary; " + limit + " cannot be judged"
                                 : "the summary has no '" + t.field + "'; " + limit + " cannot be judged";
    return r;
  }
  double measured = v->as_number();
  r.measured = measured * t.display_scale;
  r.passed = t.minimum ? measured >= t.limit : measured <= t.limit;
  const char* op = t.minimum ? (r.passed ? ">=" : "<") : (r.passed ? "<=" : ">");
  r.message = t.field + " " + with_unit(*r.measured, t.unit) + " " + op + " " + limit;
  return r;
}

std::string missed_thresholds(const plan::WorkloadParams& w, const std::vector<report::ThresholdResult>& judged) {
  std::string out;
  for (const auto& t : judged)
    if (!t.passed) out += (out.empty() ? "" : "; ") + t.message;
  return out.empty() ? out : "workload '" + w.name + "': " + out;
}

std::string headline(const lua::Value& summary) {
  auto number = [&](const char* key) -> std::optional<double> {
    const auto* v = summary.find(key);
    if (v && v->is_number()) return v->as_number();
    return std::nullopt;
  };
  if (auto bw = number("bw_avg")) {
    std::string out = "BW average " + report::format_number(*bw) + " MB/sec";
    if (auto rate = number("msg_rate")) out += ", " + report::format_number(*rate) + " Mpps";
    return out;
  }
  if (auto typical = number("t_typical")) {
    std::string out = "t_typical " + report::format_number(*typical) + " usec";
    if (auto p99 = number("p99")) out += ", p99 " + report::format_number(*p99) + " usec";
    return out;
  }
  return "ok";
}

namespace {

// size, iterations, bytes, seconds, bw_peak, bw_avg, msg_rate of `bw`, then the latency figures.
report::Fields summary_fields(uint64_t size, const dataplane::BandwidthStats& bw, double peak, std::vector<double>& latency_us) {
  report::Fields f;
  f.emplace_back("size", static_cast<int64_t>(size));
  f.emplace_back("iterations", static_cast<int64_t>(bw.ops));
  f.emplace_back("bytes", static_cast<int64_t>(bw.bytes));
  f.emplace_back("seconds", bw.seconds);
  // The whole run is one of the windows a peak is the best of (perf.lua does the same). Not
  // measured: no field (a 0 would read as a drop to `qpo compare`).
  if (peak > 0) f.emplace_back("bw_peak", std::max(peak, bw.bw_avg));
  f.emplace_back("bw_avg", bw.bw_avg);
  f.emplace_back("msg_rate", bw.msg_rate);
  if (latency_us.empty()) return f;
  auto lat = dataplane::latency_stats(latency_us);  // perftest's conventions, as the scripts' figures
  f.emplace_back("t_min", lat.t_min);
  f.emplace_back("t_max", lat.t_max);
  f.emplace_back("t_typical", lat.t_typical);
  f.emplace_back("t_avg", lat.t_avg);
  f.emplace_back("p99", lat.p99);
  f.emplace_back("p999", lat.p999);
  f.emplace_back("far_from_median", lat.far_from_median);
  f.emplace_back("bimodal_share", lat.bimodal_share);
  return f;
}

dataplane::BandwidthStats run_of(uint64_t size, uint64_t iterations, double seconds) {
  dataplane::BandwidthStats bw;
  bw.ops = iterations;
  bw.bytes = size * iterations;
  bw.seconds = seconds;
  return bw;
}

}  // namespace

report::Fields op_summary(uint64_t size, uint64_t iterations, double seconds, std::vector<double>& latency_us, double peak) {
  auto bw = run_of(size, iterations, seconds);
  dataplane::set_rates(bw);
  return summary_fields(size, bw, peak, latency_us);
}

report::Fields group_summary(uint64_t size, const std::vector<MemberRun>& members, dataplane::BandwidthStats* together,
                             double peak) {
  std::vector<dataplane::BandwidthStats> runs;
  std::vector<double> latency;
  for (const auto& m : members) {
    runs.push_back(run_of(size, m.iterations, m.seconds));
    if (m.latency_us) latency.insert(latency.end(), m.latency_us->begin(), m.latency_us->end());
  }
  auto all = dataplane::together(runs);
  if (together) *together = all;
  report::Fields f = summary_fields(size, all, peak, latency);
  f.emplace_back("qps", static_cast<int64_t>(members.size()));
  return f;
}

bool stopped_by_other_lane(const std::string& member, const LaneFailure& f) { return !f.qp.empty() && f.qp != member; }

std::string lane_message(const std::string& member, const LaneFailure& f, const std::string& error) {
  if (!stopped_by_other_lane(member, f)) return error;
  std::string how = f.wc_status ? util::wc_status_name(f.wc_status) : f.err ? util::errno_name(f.err) : "";
  return "not finished: worker stopped after " + f.qp + " failed" + (how.empty() ? "" : " (" + how + ")");
}

}  // namespace qpo::exec
