#pragma once
// Reading scenario files and running loader + validator, shared by validate, plan and run.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "check/checked.h"
#include "diag/diagnostic.h"
#include "diag/render.h"
#include "scenario/model.h"
#include "util/json_writer.h"
#include "util/source_text.h"

namespace qpo::cli {

struct LoadedScenario {
  std::unique_ptr<util::SourceText> source;
  // What validate made of the loaded scenario (it is elaborated in place, not copied: 10,000
  // QPs copied cost a quarter of validate's time): plan and run use this.
  std::optional<check::Checked> checked;
  diag::DiagSink diags;
  bool read_failed = false;   // could not read the file: a system error (exit 2)
  std::string read_error;
  std::vector<std::string> overrides;  // --set PATH=VALUE, applied before validation

  // The validated scenario; nullptr when the file was unreadable or not YAML.
  const scenario::Scenario* scenario() const { return checked ? &checked->model() : nullptr; }
};

// `--set PATH=VALUE` (repeatable) on a command that loads scenarios.
void add_set_option(CLI::App& cmd, std::vector<std::string>& overrides);

// Reads, loads (with `overrides` applied to the YAML) and validates. Never throws for bad input.
// `override_origins[i]`, when given, is where override i was written (a matrix entry).
std::unique_ptr<LoadedScenario> load_and_validate(const std::string& path,
                                                  const std::vector<std::string>& overrides = {},
                                                  const std::vector<util::SourceLoc>& override_origins = {});

struct OutputOptions;

// "PATH:LINE: [ ] and { } nest deeper than 64 levels; not a NOUN" when `text` (read from `path`,
// util/input_file.h) nests flow collections past scenario::kMaxFlowDepth, which costs yaml-cpp
// gigabytes to parse; nothing when it may be parsed.
std::optional<std::string> too_deep_to_parse(std::string_view text, const std::string& path, const char* noun);

// Loads, validates and prints diagnostics. Returns the exit code to stop with (2 unreadable,
// 1 invalid, with `why_not` saying what is skipped), or 0 with the scenario ready in `out`.
// With --format json a file that stops here is also printed on stdout as `qpo validate
// --format json` prints it, so `qpo plan|run --format json ... | jq` always gets JSON.
int load_valid(const std::string& path, const OutputOptions& format, const char* why_not,
               std::unique_ptr<LoadedScenario>* out, const std::vector<std::string>& overrides = {});

// One file's result as a JSON object: file, error (unreadable only), valid, errors, warnings,
// diagnostics. `invalid`: errors, or warnings under --strict.
void render_file_json(util::JsonWriter& w, const std::string& file, const LoadedScenario& l, bool invalid);

// Prints diagnostics (text to stderr with the source line, or appends JSON).
void print_diagnostics(const LoadedScenario& l, bool color);

}  // namespace qpo::cli
