#include "report/workload_render.h"

#include <cmath>
#include <cstdio>

#include "util/strings.h"

namespace qpo::report {

namespace {

std::string scalar_text(const Scalar& v) {
  if (const auto* b = std::get_if<bool>(&v)) return *b ? "true" : "false";
  if (const auto* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&v)) return format_number(*d);
  return std::get<std::string>(v);
}

void scalar_json(util::JsonWriter& j, const Scalar& v) {
  if (const auto* b = std::get_if<bool>(&v)) j.value(*b);
  else if (const auto* i = std::get_if<int64_t>(&v)) j.value(*i);
  else if (const auto* d = std::get_if<double>(&v)) std::isfinite(*d) ? j.value(*d) : j.null();
  else j.value(std::get<std::string>(v));
}

void fields_json(util::JsonWriter& j, const Fields& f) {
  j.begin_object();
  for (const auto& [k, v] : f) {
    j.key(k);
    scalar_json(j, v);
  }
  j.end_object();
}

}  // namespace

std::string format_number(double v) {
  char b[64];
  if (!std::isfinite(v)) return "nan";
  // Large values need no decimals; small ones keep four significant digits (0.001065 Mpps).
  if (std::fabs(v) >= 1000) std::snprintf(b, sizeof b, "%.0f", v);
  else std::snprintf(b, sizeof b, "%.4g", v);
  return b;
}

std::string render_workload_text(const WorkloadResult& w, const std::string& indent) {
  std::string out;
  if (!w.table.empty()) {
    // The table is the script's report().text: its lines reach the terminal printable only.
    std::vector<std::string> shown;
    size_t width = 0;
    for (size_t start = 0; start < w.table.size();) {
      size_t end = w.table.find('\n', start);
      if (end == std::string::npos) end = w.table.size();
      shown.push_back(util::printable(std::string_view(w.table).substr(start, end - start)));
      width = std::max(width, shown.back().size());
      start = end + 1;
    }
    std::string rule = indent + std::string(width, '-') + "\n";
    out += rule;
    for (const auto& line : shown) out += indent + line + "\n";
    out += rule;
  } else if (!w.summary.empty()) {
    std::string line;
    for (const auto& [k, v] : w.summary)
      line += (line.empty() ? "" : "  ") + util::printable(k, 200) + " " + util::printable(scalar_text(v), 1000);
    out += indent + line + "\n";
  }
  for (const auto& t : w.thresholds)
    out += indent + "threshold: " + util::printable(t.message) + "  " + (t.passed ? "ok" : "MISSED") + "\n";
  return out;
}

void render_workload_json(util::JsonWriter& j, const WorkloadResult& w) {
  j.begin_object();
  j.field("name", w.name).field("script", w.script);
  j.key("summary");
  fields_json(j, w.summary);
  j.key("runs").begin_array();
  for (const auto& r : w.runs) fields_json(j, r);
  j.end_array();
  j.field("table", w.table);
  bool passed = true;
  j.key("thresholds").begin_array();
  for (const auto& t : w.thresholds) {
    passed = passed && t.passed;
    j.begin_object();
    j.field("name", t.name).field("field", t.field).field("unit", t.unit).field("limit", t.limit);
    j.key("measured");
    if (t.measured) j.value(*t.measured);
    else j.null();
    j.field("passed", t.passed).field("message", t.message);
    j.end_object();
  }
  j.end_array();
  j.field("thresholds_passed", passed);
  if (!w.quality.empty()) {
    j.key("quality");
    fields_json(j, w.quality);
  }
  if (!w.group.empty()) j.field("group", w.group).field("aggregate", w.aggregate);  // op workloads on a QP group
  if (!w.latency.empty()) {
    j.key("latency").begin_array();
    for (const auto& d : w.latency) {
      j.begin_object();
      j.field("size", d.size).field("samples", d.samples);
      j.key("edges").begin_array();
      for (double e : d.edges) j.value(e);
      j.end_array();
      j.key("counts").begin_array();
      for (uint64_t c : d.counts) j.value(c);
      j.end_array();
      j.key("cdf").begin_array();
      for (const auto& [x, y] : d.cdf) j.begin_array().value(x).value(y).end_array();
      j.end_array();
      j.end_object();
    }
    j.end_array();
  }
  j.end_object();
}

}  // namespace qpo::report
