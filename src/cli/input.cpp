#include "cli/input.h"

#include <iostream>

#include "cli/commands.h"
#include "scenario/flow_depth.h"
#include "scenario/loader.h"
#include "util/heap_reserve.h"
#include "util/input_file.h"
#include "util/strings.h"
#include "validate/validate.h"
#include "util/strings.h"

namespace qpo::cli {

void add_set_option(CLI::App& cmd, std::vector<std::string>& overrides) {
  cmd.add_option("--set", overrides,
                 "Change or add one key of the scenario before it is validated, e.g. --set "
                 "qps.qa.states.RTR.path_mtu=1024 (repeatable; VALUE is YAML: a number, a word, [a, b])")
      ->allow_extra_args(false)
      ->type_name("PATH=VALUE");
}

std::optional<std::string> too_deep_to_parse(std::string_view text, const std::string& path, const char* noun) {
  auto deep = scenario::find_deep_flow(text);
  if (!deep) return std::nullopt;
  return util::printable(path, 512) + ":" + std::to_string(deep->line) + ": [ ] and { } nest deeper than " +
         std::to_string(scenario::kMaxFlowDepth) + " levels; not a " + noun;
}

std::unique_ptr<LoadedScenario> load_and_validate(const std::string& path, const std::vector<std::string>& overrides,
                                                  const std::vector<util::SourceLoc>& override_origins) {
  auto l = std::make_unique<LoadedScenario>();
  l->overrides = overrides;
  std::string name = path == "-" ? "<stdin>" : path;
  auto file = path == "-" ? util::read_standard_input(util::kScenarioInput) : util::read_input_file(path, util::kScenarioInput);
  if (file.problem == util::InputFile::Problem::TooLarge) {
    // The input is wrong, not the system: a diagnostic (exit 1), without reading it all.
    l->source = std::make_unique<util::SourceText>(name, "");
    auto& d = l->diags.error("Q110", {name, 0, 0}, "", file.error);
    d.hint = "write many QPs with 'count: N' instead of one block each";
    return l;
  }
  if (!file) {
    l->read_failed = true;
    l->read_error = file.error;
    return l;
  }
  // A large file: its tree, model and plan take ~25 bytes per byte of YAML (10,000 hand QPs:
  // 5.6 MB -> ~140 MB), touched once. Reserve that in huge pages (util/heap_reserve.h).
  if (file.text.size() > (256u << 10)) util::reserve_heap_in_huge_pages(file.text.size() * 25);
  l->source = std::make_unique<util::SourceText>(name, std::move(file.text));
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
