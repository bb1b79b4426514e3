#include "cli/compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "scenario/thresholds.h"
#include "util/input_file.h"
#include "util/json_reader.h"
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

std::vector<std::pair<std::string, double>> figures_of(const util::json::Value* summary) {
  std::vector<std::pair<std::string, double>> out;
  if (!summary || !summary->is(util::json::Kind::Object)) return out;
  for (const auto& f : figure_kinds()) {
    const util::json::Value* v = summary->find(f.name);
    if (v && v->is(util::json::Kind::Number) && std::isfinite(v->number * f.scale)) out.emplace_back(f.name, v->number * f.scale);
  }
  return out;
}

// A workload's name, a sweep's size: a string or a number as written.
std::optional<std::string> plain_text(const util::json::Value* v) {
  if (v && (v->is(util::json::Kind::String) || v->is(util::json::Kind::Number))) return v->text;
  return std::nullopt;
}

// What `v` is, for a message: "a number (line 4, column 15)".
std::string found(const util::json::Value& v) {
  return std::string(util::json::kind_name(v.kind)) + " (line " + std::to_string(v.line) + ", column " +
         std::to_string(v.column) + ")";
}

// One run's workloads: the summary, and each run of a sweep (several sizes) on its own.
// `error` says which field is not what qpo run writes.
bool add_run(const util::json::Value& run, const std::string& prefix, Results& out, std::string* error) {
  for (const auto& w : run.find("workloads")->items) {
    auto name_text = plain_text(w.find("name"));
    if (!name_text) continue;  // not a workload's results
    std::string name = prefix + *name_text;
    out.workloads.push_back({name, figures_of(w.find("summary"))});
    const util::json::Value* runs = w.find("runs");
    if (!runs) continue;
    std::string field = "workload " + util::printable(name, 80) + ": \"runs\"";
    if (!runs->is(util::json::Kind::Array)) {
      *error = field + " is " + found(*runs) + ", expected a list of objects (one per message size)";
      return false;
    }
    for (size_t i = 0; i < runs->items.size(); ++i)
      if (!runs->items[i].is(util::json::Kind::Object)) {
        *error = field + "[" + std::to_string(i) + "] is " + found(runs->items[i]) +
                 ", expected an object (one message size's figures)";
        return false;
      }
    if (runs->items.size() < 2) continue;  // one size: the summary says it all
    for (size_t i = 0; i < runs->items.size(); ++i) {
      const util::json::Value& one = runs->items[i];
      auto size = plain_text(one.find("size"));
      std::string which = size ? "size=" + *size : "run=" + std::to_string(i);
      out.workloads.push_back({name + "[" + which + "]", figures_of(&one)});
    }
  }
  return true;
}

bool is_run(const util::json::Value& n) {
  const util::json::Value* w = n.find("workloads");
  return w && w->is(util::json::Kind::Array);
}

std::string percent_text(const Row& r) {
  if (!r.change_pct) return "n/a (" + r.no_change_why + ")";
  char b[32];
  // Past a million percent, %.1f would print hundreds of digits.
  std::snprintf(b, sizeof b, std::fabs(*r.change_pct) < 1e6 ? "%+.1f%%" : "%+.3g%%", *r.change_pct);
  return b;
}

}  // namespace

std::string number_text(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.6g", v);
  return b;
}

std::optional<Results> parse_results(const std::string& text, const std::string& file, std::string* error) {
  std::string why;
  auto root = util::json::parse(text, &why);
  if (!root) {
    *error = file + ": not JSON: " + why;
    return std::nullopt;
  }
  Results out;
  out.file = file;
  std::vector<const util::json::Value*> runs;
  if (is_run(*root)) {
    runs.push_back(&*root);
  } else if (root->is(util::json::Kind::Array)) {
    // Several runs in one file: `jq -s . a.json b.json` of run results.
    for (const auto& r : root->items)
      if (is_run(r)) runs.push_back(&r);
  }
  if (runs.empty()) {
    *error = file + ": not a qpo run result (no \"workloads\" list; write it with qpo run --format json)";
    return std::nullopt;
  }
  for (const auto* run : runs) {
    auto scenario = plain_text(run->find("scenario"));
    std::string prefix = runs.size() > 1 && scenario ? *scenario + "/" : "";
    if (!add_run(*run, prefix, out, &why)) {
      *error = file + ": " + why;
      return std::nullopt;
    }
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
    ++c.common_workloads;
    for (const auto& measured : m.figures) {
      const std::string& figure = measured.first;  // a named variable: clang 14 cannot capture a binding
      double value = measured.second;
      auto old = std::find_if(it->second->figures.begin(), it->second->figures.end(),
                              [&](const auto& f) { return f.first == figure; });
      if (old == it->second->figures.end()) continue;
      const auto* kind = figure_kind(figure);
      Row r{m.key, figure, kind->unit, kind->higher_is_better, old->second, value, std::nullopt, "", Verdict::Within};
      // Signed so that positive is better: bandwidth up, latency down. A change too large for
      // a double (a baseline of 5e-324, or of 0) is past any tolerance, in its direction.
      double change = r.baseline != 0 ? (r.now - r.baseline) / std::fabs(r.baseline) * 100 : 0;
      if (r.baseline == 0 && r.now != 0) r.no_change_why = "baseline is 0";
      else if (!std::isfinite(change)) r.no_change_why = "too large to show";
      else r.change_pct = change;
      double gain = r.change_pct ? *r.change_pct : r.no_change_why.empty() ? 0 : (r.now > r.baseline ? HUGE_VAL : -HUGE_VAL);
      if (!r.higher_is_better) gain = -gain;
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

std::string nothing_to_compare(const Comparison& c) {
  return c.common_workloads ? "nothing to compare: the workloads in both files have no figure in common"
                            : "nothing to compare: no workload is in both files";
}

std::string render_text(const Comparison& c) {
  std::vector<std::vector<std::string>> table{{"workload", "figure", "baseline", "new", "change", "verdict"}};
  for (const auto& r : c.rows)
    table.push_back({r.workload, r.figure, number_text(r.baseline) + " " + r.unit, number_text(r.now) + " " + r.unit,
                     percent_text(r), verdict_name(r.verdict)});
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
  if (c.nothing_compared()) return out + nothing_to_compare(c) + "\n";
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
    else w.null().field("change_note", r.no_change_why);
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
  w.field("nothing_to_compare", c.nothing_compared());
  w.end_object();
}

}  // namespace qpo::cli::compare
