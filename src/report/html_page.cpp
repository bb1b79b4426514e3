#include "report/html_page.h"

#include <map>
#include <set>

#include "report/html_escape.h"
#include "report/html_wire.h"
#include "report/html_svg.h"

namespace qpo::report {

namespace {

using html::escape;
using html::num;

const char* kStyle = R"(
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; max-width: 1300px; }
h1 { font-size: 1.4em; } h2 { font-size: 1.2em; margin-top: 1.6em; border-bottom: 1px solid #ccc; }
h3 { font-size: 1.05em; }
.verdict { font-weight: bold; padding: 0 .4em; border-radius: 3px; }
.PASS { background: #c8efc8; } .FAIL, .ERROR { background: #f6c6c6; } .UNSUPPORTED { background: #f3e3a8; }
pre { background: #f6f6f6; padding: .6em; overflow-x: auto; font-size: 12px; }
table { border-collapse: collapse; font-size: 12px; }
td, th { border: 1px solid #ddd; padding: 2px 6px; text-align: left; vertical-align: top; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
tr.FAILED td { background: #fbe0e0; } tr.warning td { background: #fdf3d0; } tr.expected td { background: #e8eefc; } tr.notrun td { color: #888; }
tr.zero td { color: #999; }
.plots { display: flex; flex-wrap: wrap; gap: 12px; }
svg.plot { border: 1px solid #eee; background: #fff; }
svg .title { font-size: 13px; font-weight: bold; } svg .tick, svg .label { font-size: 11px; fill: #444; }
svg .grid { stroke: #eee; } svg .axis { stroke: #444; }
svg .bar { fill: #4a7ebb; } svg .line { fill: none; stroke: #4a7ebb; stroke-width: 2; } svg .point { fill: #4a7ebb; }
svg .threshold line { stroke: #2a9d2a; stroke-width: 1.5; stroke-dasharray: 6 3; }
svg .threshold text { font-size: 11px; fill: #2a9d2a; }
svg .threshold.missed line { stroke: #d22; } svg .threshold.missed text { fill: #d22; }
)";

// Checks that the embedded results parse and marks the page rendered (the browser test reads
// the mark); numbers in the steps table get a thousands separator on hover. No network, no eval.
const char* kScript = R"(
(function () {
  var data = JSON.parse(document.getElementById('qpo-results').textContent);
  var runs = Array.isArray(data) ? data : [data];
  var workloads = 0;
  runs.forEach(function (r) { workloads += (r.workloads || []).length; });
  document.body.setAttribute('data-rendered', 'ok');
  document.body.setAttribute('data-runs', String(runs.length));
  document.body.setAttribute('data-workloads', String(workloads));
  document.body.setAttribute('data-plots', String(document.querySelectorAll('svg.plot').length));
})();
)";

const std::set<std::string>& latency_fields() {
  static const std::set<std::string> f{"t_min", "t_max", "t_typical", "t_avg", "t_stdev", "p99", "p999"};
  return f;
}

std::vector<html::ThresholdLine> lines_for(const WorkloadResult& w, const char* unit) {
  std::vector<html::ThresholdLine> out;
  for (const auto& t : w.thresholds) {
    bool latency = latency_fields().count(t.field) && t.unit == "usec";
    bool bandwidth = t.field == "bw_avg" && t.unit == "MB/s";
    if ((std::string(unit) == "usec" && latency) || (std::string(unit) == "MB/s" && bandwidth))
      out.push_back({t.name, t.field, t.limit, unit, t.passed});
  }
  return out;
}


std::string scalar_html(const Scalar& v) {
  if (const auto* b = std::get_if<bool>(&v)) return *b ? "true" : "false";
  if (const auto* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&v)) return num(*d);
  return escape(std::get<std::string>(v));
}

std::string fields_table(const Fields& f) {
  std::string s = "<table class=\"fields\"><tr>";
  for (const auto& [k, v] : f) s += "<th>" + escape(k) + "</th>";
  s += "</tr><tr>";
  for (const auto& [k, v] : f) s += "<td class=\"n\">" + scalar_html(v) + "</td>";
  return s + "</tr></table>\n";
}

std::string steps_table(const RunReport& r) {
  std::string s = "<table class=\"steps\"><tr><th>step</th><th>host</th><th>phase</th><th>verb</th><th>object</th>"
                  "<th>detail</th><th>outcome</th><th>errno</th><th>time (us)</th><th>message</th></tr>\n";
  for (const auto& st : r.steps) {
    std::string status = status_name(st.status);
    std::string cls = st.status == StepStatus::Failed ? "FAILED" : st.status == StepStatus::Warning ? "warning"
                      : st.status == StepStatus::ExpectedFailure ? "expected"
                      : st.status == StepStatus::NotRun                ? "notrun"
                                                                      : "";
    s += "<tr class=\"step " + cls + "\" data-step=\"" + std::to_string(st.plan_step) + "\" data-status=\"" +
         escape(status) + "\" data-micros=\"" + num(st.micros) + "\"><td class=\"n\">" +
         (st.plan_step ? std::to_string(st.plan_step) : "-") + "</td><td>" + escape(st.host) + "</td><td>" +
         escape(st.phase) + "</td><td>" + escape(st.verb) + "</td><td>" + escape(st.object) + "</td><td>" +
         escape(st.detail) + "</td><td>" + escape(status) + "</td><td class=\"n\">" + (st.err ? std::to_string(st.err) : "") +
         "</td><td class=\"n\">" + (st.micros > 0 ? num(st.micros) : "") + "</td><td>" + escape(st.message) + "</td></tr>\n";
  }
  return s + "</table>\n";
}

std::string workload_section(const WorkloadResult& w) {
  std::string s = "<section class=\"workload\" data-workload=\"" + escape(w.name) + "\">\n<h3>" + escape(w.name);
  if (!w.script.empty()) s += " <small>(" + escape(w.script) + ")</small>";
  if (w.aggregate) s += " <small>(group aggregate)</small>";
  s += "</h3>\n";
  if (!w.summary.empty()) s += fields_table(w.summary);
  if (!w.table.empty()) s += "<pre>" + escape(w.table) + "</pre>\n";
  if (!w.thresholds.empty()) {
    s += "<table class=\"thresholds\"><tr><th>threshold</th><th>field</th><th>limit</th><th>measured</th><th>unit</th>"
         "<th>result</th></tr>\n";
    for (const auto& t : w.thresholds)
      s += "<tr class=\"" + std::string(t.passed ? "" : "FAILED") + "\"><td>" + escape(t.name) + "</td><td>" +
           escape(t.field) + "</td><td class=\"n\">" + num(t.limit) + "</td><td class=\"n\">" +
           (t.measured ? num(*t.measured) : "-") + "</td><td>" + escape(t.unit) + "</td><td>" +
           (t.passed ? "ok" : "MISSED") + "</td></tr>\n";
    s += "</table>\n";
  }
  if (!w.quality.empty()) s += "<p>measurement quality:</p>" + fields_table(w.quality);
  std::string plots;
  // Bandwidth against size: a sweep's runs that measured bandwidth.
  std::vector<std::pair<double, double>> size_bw;
  for (const auto& run : w.runs)
    if (auto size = field_number(run, "size"); size)
      if (auto bw = field_number(run, "bw_avg")) size_bw.emplace_back(*size, *bw);
  if (size_bw.size() >= 2) plots += html::svg_bw_sizes(w.name, size_bw, lines_for(w, "MB/s"));
  auto lat_lines = lines_for(w, "usec");
  for (const auto& d : w.latency) {
    plots += html::svg_histogram(w.name, d, lat_lines);
    plots += html::svg_cdf(w.name, d, lat_lines);
  }
  if (!plots.empty()) s += "<div class=\"plots\">\n" + plots + "</div>\n";
  return s + "</section>\n";
}

// A group's members, one row each: the figures of their summaries (the aggregate has the plots).
std::string member_table(const std::vector<const WorkloadResult*>& members) {
  static const char* kFigures[] = {"iterations", "seconds", "bw_avg", "msg_rate", "t_typical", "p99", "t_max"};
  std::string s = "<details><summary>" + std::to_string(members.size()) +
                  " members</summary><table class=\"members\"><tr><th>workload</th>";
  for (const char* f : kFigures) s += std::string("<th>") + f + "</th>";
  s += "</tr>\n";
  for (const auto* m : members) {
    s += "<tr><td>" + escape(m->name) + "</td>";
    for (const char* f : kFigures) {
      auto v = field_number(m->summary, f);
      s += "<td class=\"n\">" + (v ? num(*v) : "") + "</td>";
    }
    s += "</tr>\n";
  }
  return s + "</table></details>\n";
}

// Per-QP bars for every group whose members reported bandwidth.
std::string group_sections(const RunReport& r) {
  std::map<std::string, std::vector<std::pair<std::string, double>>> groups;
  std::map<std::string, std::vector<const WorkloadResult*>> members;
  std::vector<std::string> order;
  for (const auto& st : r.steps) {
    if (!st.workload || st.workload->group.empty() || st.workload->aggregate) continue;
    auto bw = field_number(st.workload->summary, "bw_avg");
    if (!bw) continue;
    if (!groups.count(st.workload->group)) order.push_back(st.workload->group);
    groups[st.workload->group].emplace_back(st.workload->name, *bw);
    members[st.workload->group].push_back(st.workload.get());
  }
  std::string s;
  for (const auto& g : order) {
    std::vector<html::ThresholdLine> lines;
    for (const auto& st : r.steps)
      if (st.workload && st.workload->group == g && st.workload->aggregate) lines = lines_for(*st.workload, "MB/s");
    s += "<section class=\"group\" data-group=\"" + escape(g) + "\"><h3>group " + escape(g) + "</h3>\n" +
         html::svg_qp_bars(g, groups[g], lines) + member_table(members[g]) + "</section>\n";
  }
  return s;
}

std::string counters_table(const RunReport& r) {
  if (r.counters.empty()) return "<p>No device counters were read.</p>\n";
  std::string s = "<table class=\"counters\"><tr><th>host</th><th>device</th><th>counter</th><th>before</th><th>after</th>"
                  "<th>delta</th></tr>\n";
  // Counters that moved first, then the rest (greyed).
  for (int moved = 1; moved >= 0; --moved)
    for (const auto& c : r.counters) {
      uint64_t delta = c.after - c.before;
      if ((delta != 0) != (moved == 1)) continue;
      s += "<tr class=\"counter" + std::string(delta ? "" : " zero") + "\" data-host=\"" + escape(c.host) +
           "\" data-device=\"" + escape(c.device) + "\" data-name=\"" + escape(c.name) + "\" data-delta=\"" +
           std::to_string(delta) + "\"><td>" + escape(c.host) + "</td><td>" + escape(c.device) + "</td><td>" +
           escape(c.name) + "</td><td class=\"n\">" + std::to_string(c.before) + "</td><td class=\"n\">" +
           std::to_string(c.after) + "</td><td class=\"n\">" + (delta ? "+" : "") + std::to_string(delta) + "</td></tr>\n";
    }
  return s + "</table>\n";
}

std::string run_body(const RunReport& r, const std::string& scenario_text, const std::string& id) {
  std::string name = r.scenario.empty() ? r.file : r.scenario;
  std::string verdict = verdict_name(r.verdict);
  std::string s = "<article class=\"run\" id=\"" + escape(id) + "\" data-scenario=\"" + escape(name) + "\" data-verdict=\"" +
                  escape(verdict) + "\">\n";
  s += "<h1><span class=\"verdict " + verdict + "\">" + verdict + "</span> " + escape(name) + "</h1>\n<p>";
  if (!r.file.empty()) s += "file " + escape(r.file);
  if (!r.device.empty()) s += ", on " + escape(r.device);
  s += "</p>\n";
  if (!r.reason.empty()) s += "<p class=\"reason\">" + escape(r.reason) + "</p>\n";
  for (const auto& o : r.overrides) s += "<p>with --set " + escape(o) + "</p>\n";
  for (const auto& d : r.disagreements) s += "<p class=\"reason\">DISAGREEMENT: " + escape(d) + "</p>\n";
  if (r.qps_at_rts && r.bringup_seconds > 0)
    s += "<p>bring-up: " + std::to_string(r.qps_at_rts) + " QPs to RTS in " + num(r.bringup_seconds) + " s</p>\n";
  s += "<h2>Scenario</h2>\n";
  s += scenario_text.empty() ? "<p>(the scenario's text was not at hand)</p>\n"
                             : "<details open><summary>" + escape(r.file.empty() ? name : r.file) + "</summary><pre class=\"scenario\">" +
                                   escape(scenario_text) + "</pre></details>\n";
  s += "<h2>Workloads</h2>\n";
  bool any = false;
  for (const auto& st : r.steps)
    if (st.workload && (st.workload->group.empty() || st.workload->aggregate)) {  // members: in the group's section
      s += workload_section(*st.workload);
      any = true;
    }
  if (!any) s += "<p>No workload reported results.</p>\n";
  s += group_sections(r);
  s += html::wire_section(r);
  s += "<h2>Device counters</h2>\n" + counters_table(r);
  s += "<h2>Plan and outcome</h2>\n<p>Every line the run reported, numbered as <code>qpo plan</code> numbers its steps.</p>\n";
  s += steps_table(r);
  return s + "</article>\n";
}

std::string page(const std::string& title, const std::string& body, const std::string& results_json) {
  std::string s = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  // No request leaves the page: nothing to load, and the policy forbids it anyway.
  s += "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
       "script-src 'unsafe-inline'; img-src data:\">\n";
  s += "<title>" + escape(title) + "</title>\n<style>" + std::string(kStyle) + "</style>\n</head>\n<body>\n";
  s += body;
  s += "<script type=\"application/json\" id=\"qpo-results\">" + html::script_json(results_json) + "</script>\n";
  s += "<script>" + std::string(kScript) + "</script>\n</body>\n</html>\n";
  return s;
}

}  // namespace

std::string render_html(const RunReport& r, const std::string& scenario_text) {
  util::JsonWriter w;
  render_json(w, r);
  std::string name = r.scenario.empty() ? r.file : r.scenario;
  return page("qpo: " + std::string(verdict_name(r.verdict)) + " " + name, run_body(r, scenario_text, "run-1"), w.str());
}

std::string render_html_suite(const std::vector<HtmlRun>& runs, const std::string& title) {
  util::JsonWriter w;
  w.begin_array();
  std::string body = "<h1>" + escape(title) + "</h1>\n<table class=\"suite\"><tr><th>scenario</th><th>verdict</th><th>reason</th></tr>\n";
  std::string runs_html;
  for (size_t i = 0; i < runs.size(); ++i) {
    const auto& r = *runs[i].report;
    std::string id = "run-" + std::to_string(i + 1);
    std::string name = r.scenario.empty() ? r.file : r.scenario;
    body += "<tr class=\"" + std::string(r.verdict == Verdict::Fail || r.verdict == Verdict::Error ? "FAILED" : "") +
            "\"><td><a href=\"#" + id + "\">" + escape(name) + "</a></td><td>" + verdict_name(r.verdict) + "</td><td>" +
            escape(r.reason) + "</td></tr>\n";
    runs_html += run_body(r, runs[i].scenario_text, id);
    render_json(w, r);
  }
  w.end_array();
  return page(title, body + "</table>\n" + runs_html, w.str());
}

}  // namespace qpo::report
