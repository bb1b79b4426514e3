#pragma once
// qpo compare: the figures of two run results (`qpo run --format json`), paired by workload,
// with the change and a direction-aware verdict: bandwidth or message rate down is a
// regression, latency up is.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "util/json_writer.h"

namespace qpo::cli::compare {

// One result file's figures, in file order: "write_bw" (the summary) and, for a workload that
// ran several sizes, "write_lat[size=64]" per run; a file holding a list of runs (`jq -s`)
// prefixes the scenario's name: "rc-write-bw-lua/write_bw".
struct Measured {
  std::string key;
  std::vector<std::pair<std::string, double>> figures;  // figure name -> value
};
struct Results {
  std::string file;
  std::vector<Measured> workloads;
};

// Parses a result file's text (strict JSON, util/json_reader.h). nullopt with `error` saying why when
// it is not JSON, holds no run result, or a field is not what qpo run writes (naming it).
std::optional<Results> parse_results(const std::string& text, const std::string& file, std::string* error);
// Reads and parses `path`; `error` names the file.
std::optional<Results> read_results(const std::string& path, std::string* error);

// "5%", "5" or "0.5%": a percentage of the baseline. nullopt when not a number >= 0.
std::optional<double> parse_tolerance(const std::string& text);

// Within: the change is inside the tolerance, either way. Better/Regression: past it.
enum class Verdict { Within, Better, Regression };
const char* verdict_name(Verdict v);

struct Row {
  std::string workload, figure, unit;
  bool higher_is_better = true;
  double baseline = 0, now = 0;
  std::optional<double> change_pct;  // (now - baseline) / |baseline| x 100, when a finite number
  std::string no_change_why;         // why change_pct is none: "baseline is 0", "too large to show"
  Verdict verdict = Verdict::Within;
};

struct Comparison {
  std::string new_file, baseline_file;
  double tolerance_pct = 5;
  std::vector<Row> rows;
  std::vector<std::string> only_new, only_baseline;  // workloads present in one file only
  size_t common_workloads = 0;                        // workloads in both files
  size_t regressions() const;
  // No figure is in both files (no workload in common, or none with a figure in common):
  // there is nothing to compare, which is not "no regression".
  bool nothing_compared() const { return rows.empty(); }
};

Comparison compare(const Results& now, const Results& baseline, double tolerance_pct);

// The unit a compared figure is in ("MB/s", "usec", "%"), "" for a name that is not one.
std::string figure_unit(const std::string& figure);

// "nothing to compare: no workload is in both files" (when nothing_compared()).
std::string nothing_to_compare(const Comparison& c);

// The table, the workloads in one file only, and the regression count (or nothing_to_compare).
// A figure as compare and baseline print it: 6 significant digits ("%.6g").
std::string number_text(double v);
std::string render_text(const Comparison& c);
void render_json(util::JsonWriter& w, const Comparison& c);

}  // namespace qpo::cli::compare
