#include "report/run_report.h"

#include <cstdio>

#include "report/workload_render.h"
#include "util/strings.h"

namespace qpo::report {

std::optional<double> field_number(const Fields& f, const std::string& key) {
  for (const auto& [k, v] : f) {
    if (k != key) continue;
    if (const auto* d = std::get_if<double>(&v)) return *d;
    if (const auto* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
  }
  return std::nullopt;
}

void RunReport::order_new_lines() {
  if (ordered_ >= steps.size()) return;
  // Each new line's place, and a stable sort of the new lines by it (a plan step's lines keep
  // the order they came in, a closing line last). A line with plan step 0 (none was current)
  // sits after the line that came before it.
  struct Place {
    int step;
    bool closes;  // StepResult::closes_step: after the step's other lines
    size_t line;
  };
  std::vector<Place> places;
  places.reserve(steps.size() - ordered_);
  int place = placed_step_;
  for (size_t i = ordered_; i < steps.size(); ++i) {
    if (steps[i].plan_step) place = steps[i].plan_step;
    places.push_back({place, steps[i].closes_step, i});
  }
  std::stable_sort(places.begin(), places.end(),
                   [](const Place& a, const Place& b) { return a.step != b.step ? a.step < b.step : a.closes < b.closes; });
  std::vector<StepResult> ordered;
  ordered.reserve(places.size());
  for (const auto& p : places) ordered.push_back(std::move(steps[p.line]));
  std::move(ordered.begin(), ordered.end(), steps.begin() + static_cast<std::ptrdiff_t>(ordered_));
  placed_step_ = places.back().step;
  ordered_ = steps.size();
}

const char* status_name(StepStatus s) {
  switch (s) {
    case StepStatus::Ok: return "ok";
    case StepStatus::Failed: return "FAILED";
    case StepStatus::ExpectedFailure: return "failed as expected";
    case StepStatus::Skipped: return "skipped";
    case StepStatus::Warning: return "warning";
    case StepStatus::Info: return "info";
    case StepStatus::NotRun: return "not run";
  }
  return "?";
}

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::Pass: return "PASS";
    case Verdict::Fail: return "FAIL";
    case Verdict::Unsupported: return "UNSUPPORTED";
    case Verdict::Error: return "ERROR";
  }
  return "?";
}

std::string render_step_text(const StepResult& s, bool verbose) {
  if (!verbose && s.status == StepStatus::Info) return "";
  if (!verbose && s.status == StepStatus::NotRun && s.message.empty()) return "";  // its batch's first line counts it
  std::string out;
  // Numbered as `qpo plan` numbers the step (per host); a step may report several lines.
  char num[16] = "   -";
  if (s.plan_step > 0) std::snprintf(num, sizeof num, "%4d", s.plan_step);
  char head[160];
  // Names, details and messages carry scenario text and script output: printable only.
  std::string object = util::printable(s.object, 200);
  std::snprintf(head, sizeof head, "%s %-11s %-24s %-14s ", num, s.phase.c_str(), s.verb.c_str(), object.c_str());
  out += head;
  if (!s.detail.empty()) out += util::printable(s.detail, 1000) + "  ";
  out += status_name(s.status);
  if (s.micros > 0) {
    char t[32];
    std::snprintf(t, sizeof t, "  %.0f us", s.micros);
    out += t;
  }
  if (!s.message.empty()) out += "\n     " + util::printable(s.message);
  out += "\n";
  if (s.workload) out += render_workload_text(*s.workload, "     ");
  return out;
}

std::string render_text(const RunReport& r, bool verbose) {
  std::string out;
  for (const auto& s : r.steps) out += render_step_text(s, verbose);
  return out + render_summary_text(r);
}

std::string render_summary_text(const RunReport& r) {
  std::string out;
  for (const auto& d : r.disagreements)
    out += "DISAGREEMENT (bug in qpo's rule tables or the provider): " + util::printable(d) + "\n";
  if (r.qps_at_rts && r.bringup_seconds > 0) {
    char b[160];
    std::snprintf(b, sizeof b, "bring-up: %zu QPs to RTS in %.3f s (%.0f QPs/s, create + modify + query each)\n",
                  r.qps_at_rts, r.bringup_seconds, static_cast<double>(r.qps_at_rts) / r.bringup_seconds);
    out += b;
  }
  // Before the verdict: the last line stays the verdict (qpo test shows it as the reason).
  for (const auto& o : r.overrides) out += "with --set " + util::printable(o, 200) + "\n";
  out += std::string(verdict_name(r.verdict)) + " " + util::printable(r.scenario.empty() ? r.file : r.scenario, 200);
  if (!r.device.empty()) out += " on " + util::printable(r.device, 200);
  if (!r.reason.empty()) out += ": " + util::printable(r.reason);
  out += "\n";
  return out;
}

void render_step_fields(util::JsonWriter& w, const StepResult& s) {
  w.field("step", s.plan_step).field("host", s.host).field("phase", s.phase).field("verb", s.verb).field("object", s.object);
  w.field("detail", s.detail).field("status", status_name(s.status)).field("errno", s.err);
  w.field("micros", s.micros).field("message", s.message);
}

std::string render_step_event(const StepResult& s) {
  util::JsonWriter w(false);
  w.begin_object().field("event", "step");
  render_step_fields(w, s);
  if (s.workload) {
    w.key("workload");
    render_workload_json(w, *s.workload);
  }
  w.end_object();
  return w.str();
}

std::string render_end_event(const RunReport& r) {
  util::JsonWriter w(false);
  w.begin_object().field("event", "end").field("scenario", r.scenario).field("file", r.file).field("device", r.device);
  w.field("verdict", verdict_name(r.verdict)).field("reason", r.reason).field("exit_code", exit_code(r));
  w.end_object();
  return w.str();
}

void render_json(util::JsonWriter& w, const RunReport& r) {
  w.begin_object();
  w.field("scenario", r.scenario);
  w.field("file", r.file);
  w.field("device", r.device);
  w.field("verdict", verdict_name(r.verdict));
  w.field("reason", r.reason);
  w.field("qps_at_rts", static_cast<uint64_t>(r.qps_at_rts));
  w.field("bringup_seconds", r.bringup_seconds);
  w.key("overrides").begin_array();
  for (const auto& o : r.overrides) w.value(o);
  w.end_array();
  w.key("disagreements").begin_array();
  for (const auto& d : r.disagreements) w.value(d);
  w.end_array();
  w.key("steps").begin_array();
  for (const auto& s : r.steps) {
    w.begin_object();
    render_step_fields(w, s);
    w.end_object();
  }
  w.end_array();
  w.key("workloads").begin_array();
  for (const auto& s : r.steps)
    if (s.workload) render_workload_json(w, *s.workload);
  w.end_array();
  w.key("counters").begin_array();
  for (const auto& c : r.counters) {
    w.begin_object();
    w.field("host", c.host).field("device", c.device).field("name", c.name);
    w.field("before", c.before).field("after", c.after).field("delta", c.after - c.before);
    w.end_object();
  }
  w.end_array();
  if (!r.wire.empty()) {
    w.key("wire").begin_array();
    for (const auto& q : r.wire) {
      w.begin_object().field("host", q.host).field("qp", q.qp).field("peer", q.peer).field("total", static_cast<uint64_t>(q.total));
      w.key("events").begin_array();
      for (const auto& e : q.events) w.value(e);
      w.end_array().key("packets").begin_array();
      for (const auto& p : q.packets)
        w.begin_object().field("t_us", p.t_us).field("to_peer", p.to_peer).field("what", p.what).field("psn", p.psn).field("note", p.note).end_object();
      w.end_array().end_object();
    }
    w.end_array();
  }
  w.end_object();
}

int exit_code(const RunReport& r) {
  switch (r.verdict) {
    case Verdict::Pass: return 0;
    case Verdict::Fail: return 1;
    case Verdict::Unsupported: return 77;
    case Verdict::Error: return 2;
  }
  return 2;
}

}  // namespace qpo::report
