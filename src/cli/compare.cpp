#include "cli/compare.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "scenario/flow_depth.h"
#include "scenario/thresholds.h"
#include "util/input_file.h"
#include "util/strings.h"

namespace qpo::cli::compare {

namespace {

// The figures compared: every field a threshold judges, with its unit and direction
// (scenario/thresholds.h), and the summary fields no threshold judges, like one that does.
struct FigureKind {
  std::string name;
  const char* unit;
  bool higher_is_better;
  double scale;  // file value x scale = value in `unit` (loss: a fraction, shown in %)
};

const std::vector<FigureKind>& figure_kinds() {
  static const std::vector<FigureKind> kinds = [] {
    std::vector<FigureKind> out;
    auto add = [&](const std::string& name, const scenario::ThresholdKind& k) {
      out.push_back({name, scenario::unit_label(k.unit), k.minimum, scenario::display_scale(k.unit)});
    };
    for (const auto& k : scenario::threshold_kinds()) add(k.field, k);
    constexpr std::pair<const char*, const char*> kLike[] = {{"bw_peak", "bw_avg"}, {"t_min", "t_typical"}, {"t_max", "t_typical"}};
    for (const auto& [name, like] : kLike)
      for (const auto& k : scenario::threshold_kinds())
        if (std::string(k.field) == like) add(name, k);
    return out;
  }();
  return kinds;
}

const FigureKind* figure_kind(const std::string& name) {
  for (const auto& f : figure_kinds())
    if (name == f.name) return &f;
  return nullptr;
}

std::vector<std::pair<std::string, double>> figures_of(const YAML::Node& summary) {
  std::vector<std::pair<std::string, double>> out;
  if (!summary.IsMap()) return out;
  for (const auto& f : figure_kinds()) {
    const YAML::Node v = summary[f.name];
    double x = 0;
    if (v && v.IsScalar() && YAML::convert<double>::decode(v, x) && std::isfinite(x)) out.emplace_back(f.name, x * f.scale);
  }
  return out;
}

// One run's workloads: the summary, and each run of a sweep (several sizes) on its own.
void add_run(const YAML::Node& run, const std::string& prefix, Results& out) {
  for (const auto& w : run["workloads"]) {
    if (!w.IsMap() || !w["name"] || !w["name"].IsScalar()) continue;
    std::string name = prefix + w["name"].Scalar();
    out.workloads.push_back({name, figures_of(w["summary"])});
    const YAML::Node runs = w["runs"];
    if (!runs || !runs.IsSequence() || runs.size() < 2) continue;
    for (size_t i = 0; i < runs.size(); ++i) {
      const YAML::Node size = runs[i]["size"];
      std::string which = size && size.IsScalar() ? "size=" + size.Scalar() : "run=" + std::to_string(i);
      out.workloads.push_back({name + "[" + which + "]", figures_of(runs[i])});
    }
  }
}

bool is_run(const YAML::Node& n) { return n.IsMap() && n["workloads"] && n["workloads"].IsSequence(); }

std::string number_text(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.6g", v);
  return b;
}

std::string percent_text(const std::optional<double>& p) {
  if (!p) return "n/a";
  char b[32];
  std::snprintf(b, sizeof b, "%+.1f%%", *p);
  return b;
}

}  // namespace

std::optional<Results> parse_results(const std::string& text, const std::string& file, std::string* error) {
  if (scenario::find_deep_flow(text)) {
    *error = file + ": not a qpo result (brackets nest too deep)";
    return std::nullopt;
  }
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    *error = file + ": not JSON: " + e.msg + " (line " + std::to_string(e.mark.line + 1) + ")";
    return std::nullopt;
  }
  Results out;
  out.file = file;
  std::vector<YAML::Node> runs;
  if (is_run(root)) {
    runs.push_back(root);
  } else if (root.IsSequence()) {
    // Several runs in one file: `jq -s . a.json b.json` of run results.
    for (const auto& r : root)
      if (is_run(r)) runs.push_back(r);
  }
  if (runs.empty()) {
    *error = file + ": not a qpo run result (no \"workloads\" list; write it with qpo run --format json)";
    return std::nullopt;
  }
  for (const auto& run : runs) {
    std::string prefix;
    if (runs.size() > 1 && run["scenario"] && run["scenario"].IsScalar()) prefix = run["scenario"].Scalar() + "/";
    add_run(run, prefix, out);
  }
  return out;
}

std::optional<Results> read_results(const std::string& path, std::string* error) {
  auto file = util::read_input_file(path, util::kResultsInput);
  if (!file) {
    *error = file.error;
    return std::nullopt;
  }
  return parse_results(file.text, path, error);
}

std::optional<double> parse_tolerance(const std::string& text) {
  std::string t(util::trim(text));
  if (!t.empty() && t.back() == '%') t.pop_back();
  if (t.empty()) return std::nullopt;
  char* end = nullptr;
  double v = std::strtod(t.c_str(), &end);
  if (*end != '\0' || !std::isfinite(v) || v < 0) return std::nullopt;
  return v;
}

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::Within: return "within tolerance";
    case Verdict::Better: return "better";
    case Verdict::Regression: return "REGRESSION";
  }
  return "?";
}

size_t Comparison::regressions() const {
  return static_cast<size_t>(std::count_if(rows.begin(), rows.end(), [](const Row& r) { return r.verdict == Verdict::Regression; }));
}

Comparison compare(const Results& now, const Results& baseline, double tolerance_pct) {
  Comparison c;
  c.new_file = now.file;
  c.baseline_file = baseline.file;
  c.tolerance_pct = tolerance_pct;
  std::map<std::string, const Measured*> base;
  for (const auto& m : baseline.workloads) base.emplace(m.key, &m);
  std::map<std::string, bool> seen;
  for (const auto& m : now.workloads) {
    seen[m.key] = true;
    auto it = base.find(m.key);
    if (it == base.end()) {
      c.only_new.push_back(m.key);
      continue;
    }
    for (const auto& measured : m.figures) {
      const std::string& figure = measured.first;  // a named variable: clang 14 cannot capture a binding
      double value = measured.second;
      auto old = std::find_if(it->second->figures.begin(), it->second->figures.end(),
                              [&](const auto& f) { return f.first == figure; });
      if (old == it->second->figures.end()) continue;
      const auto* kind = figure_kind(figure);
      Row r{m.key, figure, kind->unit, kind->higher_is_better, old->second, value, std::nullopt, Verdict::Within};
      // Signed so that positive is better: bandwidth up, latency down.
      double gain = 0;
      if (r.baseline != 0) {
        r.change_pct = (r.now - r.baseline) / std::fabs(r.baseline) * 100;
        gain = r.higher_is_better ? *r.change_pct : -*r.change_pct;
      } else if (r.now != 0) {
        gain = (r.higher_is_better ? 1 : -1) * HUGE_VAL;
      }
      if (gain > tolerance_pct) r.verdict = Verdict::Better;
      else if (-gain > tolerance_pct) r.verdict = Verdict::Regression;
      c.rows.push_back(std::move(r));
    }
  }
  for (const auto& m : baseline.workloads)
    if (!seen.count(m.key)) c.only_baseline.push_back(m.key);
  return c;
}

std::string figure_unit(const std::string& figure) {
  const auto* kind = figure_kind(figure);
  return kind ? kind->unit : "";
}

std::string render_text(const Comparison& c) {
  std::vector<std::vector<std::string>> table{{"workload", "figure", "baseline", "new", "change", "verdict"}};
  for (const auto& r : c.rows)
    table.push_back({r.workload, r.figure, number_text(r.baseline) + " " + r.unit, number_text(r.now) + " " + r.unit,
                     percent_text(r.change_pct), verdict_name(r.verdict)});
  std::vector<size_t> width(table[0].size(), 0);
  for (const auto& row : table)
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  std::string out;
  if (c.rows.empty()) table.clear();  // nothing paired: no header either
  for (const auto& row : table) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      std::string cell = util::printable(row[i], 200);
      line += cell;
      if (i + 1 < row.size()) line += std::string(width[i] - row[i].size() + 2, ' ');
    }
    out += line + "\n";
  }
  for (const auto& w : c.only_new) out += "only in " + util::printable(c.new_file, 200) + ": " + util::printable(w, 200) + "\n";
  for (const auto& w : c.only_baseline)
    out += "only in " + util::printable(c.baseline_file, 200) + ": " + util::printable(w, 200) + "\n";
  size_t n = c.regressions();
  out += n ? std::to_string(n) + (n == 1 ? " regression" : " regressions") + " beyond " + number_text(c.tolerance_pct) + "%\n"
           : "no regression beyond " + number_text(c.tolerance_pct) + "%\n";
  return out;
}

void render_json(util::JsonWriter& w, const Comparison& c) {
  w.begin_object();
  w.field("new", c.new_file).field("baseline", c.baseline_file).field("tolerance_pct", c.tolerance_pct);
  w.key("figures").begin_array();
  for (const auto& r : c.rows) {
    w.begin_object();
    w.field("workload", r.workload).field("figure", r.figure).field("unit", r.unit);
    w.field("better", r.higher_is_better ? "higher" : "lower");
    w.field("baseline", r.baseline).field("new", r.now);
    w.key("change_pct");
    if (r.change_pct) w.value(*r.change_pct);
    else w.null();
    w.field("verdict", verdict_name(r.verdict));
    w.end_object();
  }
  w.end_array();
  w.key("only_in_new").begin_array();
  for (const auto& x : c.only_new) w.value(x);
  w.end_array();
  w.key("only_in_baseline").begin_array();
  for (const auto& x : c.only_baseline) w.value(x);
  w.end_array();
  w.field("regressions", static_cast<uint64_t>(c.regressions()));
  w.end_object();
}

}  // namespace qpo::cli::compare
