#include "cli/html_report.h"

#include <filesystem>
#include <iostream>

#include "cli/input.h"
#include "cluster/codec.h"
#include "scenario/loader.h"
#include "util/input_file.h"
#include "util/json_reader.h"
#include "util/output_file.h"
#include "util/strings.h"

namespace qpo::cli {

std::string absolute_report_path(const std::string& file) {
  if (file.empty() || file[0] == '/') return file;
  std::error_code ec;
  auto abs = std::filesystem::absolute(file, ec);
  return ec ? file : abs.lexically_normal().string();
}

std::vector<std::string> report_lab_args(const std::string& absolute_file) {
  std::string dir = std::filesystem::path(absolute_file).parent_path().string();
  return {"--out", dir.empty() ? "/" : dir};
}

bool write_report_file(const std::string& file, const std::string& text, const char* option) {
  std::string error;
  if (util::write_output_file(file, text, &error)) return true;
  std::cerr << "qpo: " << option << " " << error << "\n";
  return false;
}

namespace {

// What a JSON file that is not a run result probably is, by a key only that kind writes.
std::string looks_like(const util::json::Value& v) {
  static const std::pair<const char*, const char*> kKinds[] = {
      {"only_in_new", "the output of qpo compare --format json"},
      {"files", "the output of qpo validate --format json"},
      {"stages", "the output of qpo plan --format json"},
  };
  for (const auto& [key, kind] : kKinds)
    if (v.find(key)) return std::string(" (it looks like ") + kind + ")";
  return "";
}

// One run of a results file, or why it is not one: the first key a run result has that it lacks.
void add_run(const util::json::Value& v, const std::string& where, std::vector<report::RunReport>* out) {
  if (!v.is(util::json::Kind::Object))
    throw std::runtime_error(where + "not a run result: " + util::json::kind_name(v.kind) + ", expected an object");
  std::string missing;
  for (const char* key : {"verdict", "steps"})
    if (!v.find(key)) missing += (missing.empty() ? "no \"" : " and no \"") + std::string(key) + "\"";
  if (!missing.empty())
    throw std::runtime_error(where + "not a run result: " + missing + " key" + looks_like(v) +
                             "; write one with qpo run --format json");
  out->push_back(cluster::read_report(v));
}

}  // namespace

bool parse_run_results(const std::string& text, const std::string& path, std::vector<report::RunReport>* out,
                       std::string* error) {
  const std::string shown = util::printable(path, 512);
  std::string why;
  auto root = util::json::parse(text, &why);
  if (!root) {
    *error = shown + ": not JSON: " + why;
    return false;
  }
  try {
    if (root->is(util::json::Kind::Array)) {
      for (size_t i = 0; i < root->items.size(); ++i)
        add_run(root->items[i], "item " + std::to_string(i + 1) + " of the list: ", out);
    } else {
      add_run(*root, "", out);
    }
    return true;
  } catch (const std::exception& e) {
    *error = shown + ": " + e.what();
    return false;
  }
}

bool read_run_results(const std::string& path, std::vector<report::RunReport>* out, std::string* error) {
  auto file = util::read_input_file(path, util::kResultsInput);
  if (!file) {
    *error = file.error;
    return false;
  }
  return parse_run_results(file.text, path, out, error);
}

std::string scenario_text_for_report(const std::string& path, std::string* why_not) {
  std::string ignored;
  std::string& why = why_not ? *why_not : ignored;
  if (path.empty()) return "";
  auto file = util::read_input_file(path, util::kScenarioInput);
  if (!file) {
    why = file.error;
    return "";
  }
  util::SourceText source(path, std::move(file.text));
  diag::DiagSink sink;
  if (!scenario::load_scenario(source, sink) || sink.has_errors()) {
    why = util::printable(path, 512) + " does not load as a scenario; the page shows no scenario text";
    return "";
  }
  return source.text();
}

}  // namespace qpo::cli
