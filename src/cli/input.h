#pragma once
// Reading scenario files and running loader + validator, shared by validate, plan and run.
#include <memory>
#include <optional>
#include <string>

#include "diag/diagnostic.h"
#include "diag/render.h"
#include "scenario/model.h"
#include "util/source_text.h"

namespace qpo::cli {

struct LoadedScenario {
  std::unique_ptr<util::SourceText> source;
  std::optional<scenario::Scenario> scenario;
  diag::DiagSink diags;
  bool read_failed = false;   // could not read the file: a system error (exit 2)
  std::string read_error;
};

// Reads, loads and validates. Never throws for bad input.
std::unique_ptr<LoadedScenario> load_and_validate(const std::string& path);

// Loads, validates and prints diagnostics. Returns the exit code to stop with (2 unreadable,
// 1 invalid, with `why_not` saying what is skipped), or 0 with the scenario ready in `out`.
int load_valid(const std::string& path, bool color, const char* why_not, std::unique_ptr<LoadedScenario>* out);

// Prints diagnostics (text to stderr with the source line, or appends JSON).
void print_diagnostics(const LoadedScenario& l, bool color);

}  // namespace qpo::cli
