#include "cli/matrix_check.h"

#include <iostream>
#include <memory>
#include <set>
#include <tuple>

#include "diag/render.h"
#include "suite/matrix.h"
#include "util/strings.h"

namespace qpo::cli {

namespace {

std::unique_ptr<LoadedScenario> load_case(const suite::Case& c, const std::vector<std::string>& overrides) {
  std::vector<std::string> all = overrides;
  all.insert(all.end(), c.overrides.begin(), c.overrides.end());
  // --set flags are named by their flag; the matrix's values by where they are written.
  std::vector<util::SourceLoc> origins(overrides.size());
  origins.insert(origins.end(), c.origins.begin(), c.origins.end());
  return load_and_validate(c.file, all, origins);
}

}  // namespace

size_t validate_matrix_cases(std::vector<suite::Case>& cases, const std::vector<std::string>& overrides, bool color) {
  size_t invalid = 0;
  for (auto& c : cases) {
    if (c.parameters.empty()) continue;
    auto l = load_case(c, overrides);
    if (l->read_failed || !l->scenario() || l->diags.has_errors()) {
      ++invalid;
      c.outcome = "fail";
      std::string first;
      for (const auto& d : l->diags.all())
        if (d.severity == diag::Severity::Error) {
          first = "error[" + d.code + "]: " + d.message;
          break;
        }
      c.reason = l->read_failed ? l->read_error : "invalid: " + first;
      std::cerr << "qpo test: " << util::printable(c.name, 200) << ": invalid\n";
      diag::Sources sources;
      if (l->source) sources[l->source->name()] = l->source.get();
      for (const auto& d : l->diags.all())
        if (d.severity == diag::Severity::Error) std::cerr << diag::render_text(d, sources, color) << "\n";
    }
  }
  return invalid;
}

void check_matrix(const std::string& path, const std::vector<std::string>& overrides, LoadedScenario& l) {
  // Without a matrix there is nothing to read: parsing the file a second time to find none was
  // a third of `qpo validate`'s time on a 10,000-QP file.
  if (path == "-" || l.read_failed || !l.scenario() || !l.scenario()->has_matrix) return;
  diag::DiagSink sink;
  auto m = suite::read_matrix(path, false, sink);
  for (const auto& d : sink.all()) l.diags.add(d);
  if (!m || l.diags.has_errors()) {
    l.diags.sort();
    return;
  }
  std::set<std::tuple<std::string, std::string, int, int, std::string, std::string>> seen;
  suite::Case base;
  base.file = path;
  for (auto& combination : suite::expand(*m)) {
    suite::Case c = base;
    c.overrides = combination.overrides;
    c.origins = combination.origins;
    auto one = load_case(c, overrides);
    for (auto d : one->diags.all()) {
      if (d.severity != diag::Severity::Error) continue;
      if (!seen.emplace(d.code, d.loc.file, d.loc.line, d.loc.col, d.path, d.message).second) continue;
      // Located in the file, not at a matrix value: say which combination it needs.
      bool at_value = false;
      for (const auto& o : combination.origins)
        at_value |= o.file == d.loc.file && o.line == d.loc.line && o.col == d.loc.col;
      if (!at_value) d.message += " (matrix case " + combination.suffix() + ")";
      l.diags.add(std::move(d));
    }
  }
  l.diags.sort();
}

void note_unused_matrix(const std::string& path) {
  if (path == "-") return;
  diag::DiagSink ignored;
  if (auto m = suite::read_matrix(path, false, ignored))
    std::cerr << "qpo: note: " << util::printable(path, 1000) << " has a matrix of " << m->combinations()
              << " combinations; this run uses the values written in the file (qpo test " << util::printable(path, 1000)
              << " runs every combination)\n";
}

}  // namespace qpo::cli
