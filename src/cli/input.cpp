#include "cli/input.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/commands.h"
#include "scenario/loader.h"
#include "validate/validate.h"
#include "util/strings.h"

namespace qpo::cli {

namespace {
// A 10,000-QP scenario written out in full is ~5.6 MB; past this it is not a scenario, and
// parsing it would cost gigabytes (yaml-cpp keeps ~100 bytes per byte of input).
constexpr size_t kMaxScenarioBytes = 16ull << 20;
}

void add_set_option(CLI::App& cmd, std::vector<std::string>& overrides) {
  cmd.add_option("--set", overrides,
                 "Change or add one key of the scenario before it is validated, e.g. --set "
                 "qps.qa.states.RTR.path_mtu=1024 (repeatable; VALUE is YAML: a number, a word, [a, b])")
      ->allow_extra_args(false)
      ->type_name("PATH=VALUE");
}

std::unique_ptr<LoadedScenario> load_and_validate(const std::string& path, const std::vector<std::string>& overrides,
                                                  const std::vector<util::SourceLoc>& override_origins) {
  auto l = std::make_unique<LoadedScenario>();
  l->overrides = overrides;
  std::string text;
  if (path == "-") {
    // Standard input has the same cap as a file: read at most one byte past it, then stop.
    text.resize(kMaxScenarioBytes + 1);
    std::cin.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<size_t>(std::cin.gcount()));
    if (text.size() > kMaxScenarioBytes) {
      l->source = std::make_unique<util::SourceText>("<stdin>", "");
      auto& d = l->diags.error("Q110", {"<stdin>", 0, 0}, "", "standard input holds more than 16 MiB; scenarios are limited to 16 MiB");
      d.hint = "write many QPs with 'count: N' instead of one block each";
      return l;
    }
  } else {
    std::error_code ec;
    if (std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec)) {
      l->read_failed = true;
      l->read_error = "cannot read " + path + ": not a regular file";
      return l;
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      l->read_failed = true;
      l->read_error = "cannot read " + path + ": " + std::strerror(errno);
      return l;
    }
    in.seekg(0, std::ios::end);
    auto size = in.tellg();
    if (size < 0) {
      l->read_failed = true;
      l->read_error = "cannot read " + path + ": not a regular file";
      return l;
    }
    if (static_cast<size_t>(size) > kMaxScenarioBytes) {
      // The input is wrong, not the system: a diagnostic (exit 1), without reading it all.
      l->source = std::make_unique<util::SourceText>(path, "");
      auto& d = l->diags.error("Q110", {path, 0, 0}, "", path + " is " + std::to_string(static_cast<long long>(size)) +
                                                          " bytes; scenarios are limited to 16 MiB");
      d.hint = "write many QPs with 'count: N' instead of one block each";
      return l;
    }
    in.seekg(0);
    text.resize(static_cast<size_t>(size));
    in.read(text.data(), size);
  }
  l->source = std::make_unique<util::SourceText>(path == "-" ? "<stdin>" : path, std::move(text));
  if (auto loaded = scenario::load_scenario(*l->source, l->diags, overrides, override_origins))
    l->checked = validate::validate(std::move(*loaded), l->diags);
  l->diags.sort();
  return l;
}

int load_valid(const std::string& path, const OutputOptions& format, const char* why_not,
               std::unique_ptr<LoadedScenario>* out, const std::vector<std::string>& overrides) {
  auto l = load_and_validate(path, overrides);
  bool invalid = !l->scenario() || l->diags.has_errors();
  if (format.format == "json" && (l->read_failed || invalid)) {
    util::JsonWriter json;
    json.begin_object().key("files").begin_array();
    render_file_json(json, path, *l, invalid);
    json.end_array().end_object();
    std::cout << json.str() << "\n";
  }
  if (l->read_failed) {
    std::cerr << "qpo: " << util::printable(l->read_error) << "\n";
    return 2;
  }
  print_diagnostics(*l, format.color);
  if (invalid) {
    std::cerr << util::printable(path, 1000) << ": invalid; " << why_not << "\n";
    return 1;
  }
  *out = std::move(l);
  return 0;
}

void render_file_json(util::JsonWriter& w, const std::string& file, const LoadedScenario& l, bool invalid) {
  w.begin_object();
  w.field("file", file);
  if (l.read_failed) w.field("error", l.read_error);
  w.field("valid", !l.read_failed && !invalid);
  w.field("errors", static_cast<uint64_t>(l.diags.error_count()));
  w.field("warnings", static_cast<uint64_t>(l.diags.warning_count()));
  w.key("diagnostics").begin_array();
  for (const auto& d : l.diags.all()) diag::render_json(w, d);
  w.end_array();
  w.end_object();
}

void print_diagnostics(const LoadedScenario& l, bool color) {
  diag::Sources sources;
  if (l.source) sources[l.source->name()] = l.source.get();
  for (const auto& d : l.diags.all()) std::cerr << diag::render_text(d, sources, color) << "\n";
}

}  // namespace qpo::cli
