#include "cli/html_report.h"

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <iostream>

#include "cli/input.h"
#include "cluster/codec.h"
#include "scenario/loader.h"
#include "util/input_file.h"
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

bool read_run_results(const std::string& path, std::vector<report::RunReport>* out, std::string* error) {
  auto file = util::read_input_file(path, util::kResultsInput);
  if (!file) {
    *error = file.error;
    return false;
  }
  std::string shown = util::printable(path, 512);
  if (auto deep = too_deep_to_parse(file.text, path, util::kResultsInput.noun)) {
    *error = *deep;
    return false;
  }
  try {
    YAML::Node root = YAML::Load(file.text);
    auto one = [&](const YAML::Node& n) {
      if (!n.IsMap() || !n["verdict"] || !n["steps"]) throw std::runtime_error("not a run result (qpo run --format json)");
      out->push_back(cluster::read_report(n));
    };
    if (root.IsSequence()) {
      for (const auto& n : root) one(n);
    } else {
      one(root);
    }
    return true;
  } catch (const std::exception& e) {
    *error = shown + ": " + e.what();
    return false;
  }
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
