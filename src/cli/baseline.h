#pragma once
// qpo test's results per case: its figures as JUnit properties, and baselines - a directory
// of result files, one per case (DIR/<case>.json), compared with qpo compare's code.
#include <optional>
#include <string>
#include <vector>

#include "cli/compare.h"
#include "suite/suite.h"
#include "util/json_writer.h"

namespace qpo::cli::baseline {

// A case's file in a baseline directory: its name with every character outside
// [A-Za-z0-9_.,=+[]-] as '_', then ".json": rc-write[path_mtu=1024,size=4KiB].json
std::string file_name(const std::string& case_name);

// The case's JUnit properties: its parameters, then the figures of its result file
// ("write_bw.bw_avg" -> "123.4 MB/s").
void add_properties(suite::Case& c);

// One case against its baseline file.
struct CaseBaseline {
  size_t index = 0;                             // in the cases
  std::string file;                             // DIR/<case>.json
  std::optional<compare::Comparison> result;    // none: nothing to compare (note says why)
  std::string note;
};

// Compares every case that passed and wrote a result with DIR/<case>.json. A case with a
// regression beyond `tolerance_pct` becomes a failure ("N regressions beyond 5% against FILE:
// write_bw bw_avg -10.0%"). A missing baseline file is a note, not a failure.
std::vector<CaseBaseline> compare_with(std::vector<suite::Case>& cases, const std::string& dir, double tolerance_pct);

// Prints the comparisons: a line per case, the table under one with a regression.
std::string render_text(const std::vector<suite::Case>& cases, const std::vector<CaseBaseline>& b);

// qpo test --results DIR: each case's result file is DIR/<case>.json (a name two cases share
// gets "-2", "-3"...); a file left there by an earlier run is removed first, so a case whose run
// writes none has none.
void name_results(std::vector<suite::Case>& cases, const std::string& dir);

// Writes every passed case's result to DIR/<case>.json; returns how many, `errors` says what failed.
size_t save(const std::vector<suite::Case>& cases, const std::string& dir, std::vector<std::string>* errors);

// qpo test --json: the cases with their parameters, verdicts, figures and baseline comparisons;
// with `kept_results`, each case's "results" file (null when its run wrote none); each case's
// "set": `global_sets` (qpo test's own --set, given to every case's run first), then its own.
std::string suite_json(const std::vector<suite::Case>& cases, const std::vector<CaseBaseline>& b, bool kept_results,
                       const std::vector<std::string>& global_sets = {});

}  // namespace qpo::cli::baseline
