#include "cli/baseline.h"

#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string_view>

#include "util/input_file.h"
#include "util/output_file.h"
#include "util/strings.h"

namespace qpo::cli::baseline {

namespace fs = std::filesystem;

namespace {

bool readable_result(const suite::Case& c) {
  std::error_code ec;
  return !c.results.empty() && fs::is_regular_file(c.results, ec);
}

// "2 regressions beyond 5% against DIR/x.json: write_bw bw_avg -10.0%, ..."
std::string regression_reason(const compare::Comparison& cmp, const std::string& file) {
  size_t n = cmp.regressions();
  std::string out = std::to_string(n) + (n == 1 ? " regression" : " regressions") + " beyond " +
                    compare::number_text(cmp.tolerance_pct) + "% against " + file + ":";
  size_t listed = 0;
  for (const auto& r : cmp.rows) {
    if (r.verdict != compare::Verdict::Regression) continue;
    if (listed++ == 3) {
      out += " ...";
      break;
    }
    char change[32];
    // No percentage (a baseline of 0, or a change past a double): the value it changed from.
    if (r.change_pct) std::snprintf(change, sizeof change, "%+.1f%%", *r.change_pct);
    else std::snprintf(change, sizeof change, "from %s", compare::number_text(r.baseline).c_str());
    out += std::string(listed > 1 ? "," : "") + " " + r.workload + " " + r.figure + " " + change;
  }
  return out;
}

}  // namespace

std::string file_name(const std::string& case_name) {
  std::string out;
  for (char c : case_name) {
    bool keep = std::isalnum(static_cast<unsigned char>(c)) || std::string_view("_.,=+[]-").find(c) != std::string_view::npos;
    out += keep ? c : '_';
  }
  // "." and ".." are directories, not names.
  if (out.find_first_not_of('.') == std::string::npos) out = "_" + out;
  return out + ".json";
}

void add_properties(suite::Case& c) {
  for (const auto& p : c.parameters) c.properties.push_back(p);
  if (!readable_result(c)) return;
  std::string error;
  auto r = compare::read_results(c.results, &error);
  if (!r) return;
  for (const auto& w : r->workloads)
    for (const auto& [figure, value] : w.figures) {
      std::string unit = compare::figure_unit(figure);
      c.properties.emplace_back(w.key + "." + figure, compare::number_text(value) + (unit.empty() ? "" : " " + unit));
    }
}

std::vector<CaseBaseline> compare_with(std::vector<suite::Case>& cases, const std::string& dir, double tolerance_pct) {
  std::vector<CaseBaseline> out;
  for (size_t i = 0; i < cases.size(); ++i) {
    auto& c = cases[i];
    CaseBaseline b;
    b.index = i;
    b.file = (fs::path(dir) / file_name(c.name)).string();
    std::error_code ec;
    if (c.outcome != "pass") {
      b.note = "not compared: the case did not pass";
    } else if (!readable_result(c)) {
      b.note = "not compared: the case wrote no result";
    } else if (!fs::exists(b.file, ec)) {
      b.note = "no baseline (" + b.file + ")";
    } else {
      std::string error;
      auto now = compare::read_results(c.results, &error);
      auto base = now ? compare::read_results(b.file, &error) : std::nullopt;
      if (!now || !base) {
        // A baseline that cannot be read is a broken baseline directory: the case fails.
        c.outcome = "fail";
        c.reason = "baseline: " + error;
        b.note = c.reason;
      } else {
        b.result = compare::compare(*now, *base, tolerance_pct);
        b.result->new_file = c.name;
        if (b.result->regressions()) {
          c.outcome = "fail";
          c.reason = regression_reason(*b.result, b.file);
        }
      }
    }
    out.push_back(std::move(b));
  }
  return out;
}

std::string render_text(const std::vector<suite::Case>& cases, const std::vector<CaseBaseline>& bs) {
  std::string out;
  for (const auto& b : bs) {
    std::string name = util::printable(cases[b.index].name, 200);
    if (!b.result) {
      out += "baseline " + name + ": " + util::printable(b.note, 1000) + "\n";
      continue;
    }
    size_t n = b.result->regressions();
    out += "baseline " + name + ": " +
           (n ? std::to_string(n) + (n == 1 ? " regression" : " regressions") : std::string("no regression")) +
           " beyond " + compare::number_text(b.result->tolerance_pct) + "% (" + std::to_string(b.result->rows.size()) +
           " figures against " + util::printable(b.file, 1000) + ")\n";
    if (n) {
      std::istringstream table(compare::render_text(*b.result));
      for (std::string line; std::getline(table, line);) out += "  " + line + "\n";
    }
  }
  return out;
}

void name_results(std::vector<suite::Case>& cases, const std::string& dir) {
  std::set<std::string> taken;
  for (auto& c : cases) {
    std::string name = file_name(c.name);
    for (int n = 2; !taken.insert(name).second; ++n) name = file_name(c.name + "-" + std::to_string(n));
    c.results = (fs::path(dir) / name).string();
    std::error_code ec;
    fs::remove(c.results, ec);
  }
}

size_t save(const std::vector<suite::Case>& cases, const std::string& dir, std::vector<std::string>* errors) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    errors->push_back("cannot create " + dir + ": " + ec.message());
    return 0;
  }
  size_t saved = 0;
  for (const auto& c : cases) {
    if (c.outcome != "pass" || !readable_result(c)) continue;
    std::string to = (fs::path(dir) / file_name(c.name)).string();
    // Read and written as any result and output file: a planted DIR/x.json symlink is not followed.
    auto result = util::read_input_file(c.results, util::kResultsInput);
    std::string error;
    if (!result) errors->push_back(result.error);
    else if (!util::write_output_file(to, result.text, &error)) errors->push_back(error);
    else ++saved;
  }
  return saved;
}

std::string suite_json(const std::vector<suite::Case>& cases, const std::vector<CaseBaseline>& bs, bool kept_results,
                       const std::vector<std::string>& global_sets) {
  util::JsonWriter w;
  int passed = 0, failed = 0, skipped = 0;
  w.begin_object().key("cases").begin_array();
  for (size_t i = 0; i < cases.size(); ++i) {
    const auto& c = cases[i];
    passed += c.outcome == "pass";
    skipped += c.outcome == "skip";
    failed += c.outcome == "fail" || c.outcome == "error";
    w.begin_object();
    w.field("name", c.name).field("file", c.file).field("outcome", c.outcome).field("reason", c.reason);
    w.field("seconds", c.seconds);
    if (kept_results) {
      w.key("results");
      if (readable_result(c)) w.value(c.results);
      else w.null();
    }
    w.key("parameters").begin_object();
    for (const auto& [k, v] : c.parameters) w.field(k, v);
    w.end_object();
    w.key("set").begin_array();  // the --set values its run had, in order: qpo test's, then a matrix case's
    for (const auto& ov : global_sets) w.value(ov);
    for (const auto& ov : c.overrides) w.value(ov);
    w.end_array();
    w.key("figures").begin_array();
    std::string error;
    if (readable_result(c))
      if (auto r = compare::read_results(c.results, &error))
        for (const auto& m : r->workloads)
          for (const auto& [figure, value] : m.figures) {
            w.begin_object().field("workload", m.key).field("figure", figure).field("value", value);
            w.field("unit", compare::figure_unit(figure)).end_object();
          }
    w.end_array();
    w.key("baseline");
    const CaseBaseline* b = nullptr;
    for (const auto& x : bs)
      if (x.index == i) b = &x;
    if (!b) w.null();
    else if (b->result) compare::render_json(w, *b->result);
    else w.begin_object().field("note", b->note).end_object();
    w.end_object();
  }
  w.end_array();
  w.field("passed", static_cast<int64_t>(passed)).field("failed", static_cast<int64_t>(failed));
  w.field("skipped", static_cast<int64_t>(skipped));
  w.end_object();
  return w.str();
}

}  // namespace qpo::cli::baseline
