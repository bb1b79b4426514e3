#include <algorithm>
#include <filesystem>
#include <optional>
#include <set>

#include "scenario/flow_depth.h"
#include "scenario/yaml_parse.h"
#include "suite/matrix.h"
#include "suite/suite.h"
#include "util/input_file.h"

namespace qpo::suite {

namespace fs = std::filesystem;

std::vector<Case> collect(const Options& o, std::vector<std::string>* problems, diag::DiagSink* matrix_diags) {
  diag::DiagSink ignored;
  diag::DiagSink& sink = matrix_diags ? *matrix_diags : ignored;
  std::optional<Matrix> shared;
  if (!o.matrix_file.empty()) {
    shared = read_matrix(o.matrix_file, true, sink);
    if (!shared) problems->push_back("--matrix " + o.matrix_file + ": no usable matrix (see above)");
  }
  std::vector<std::string> files;
  for (const auto& p : o.paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      for (auto it = fs::recursive_directory_iterator(p, ec); it != fs::recursive_directory_iterator(); it.increment(ec))
        if (it->is_regular_file() && (it->path().extension() == ".yaml" || it->path().extension() == ".yml"))
          files.push_back(it->path().string());
    } else if (fs::is_regular_file(p, ec)) {
      files.push_back(p);
    } else {
      problems->push_back(p + ": no such file or directory");
    }
  }
  std::sort(files.begin(), files.end());
  std::vector<Case> cases;
  for (const auto& f : files) {
    Case c;
    c.file = f;
    c.name = fs::path(f).stem().string();
    // Name and tags are only for filtering and reports; a file that does not parse still
    // becomes a case, and `qpo run` reports why it is invalid.
    try {
      // Capped like any scenario (a sparse 10 GiB file is not read); a file refused here still
      // becomes a case, and its run says why.
      auto file = util::read_input_file(f, util::kScenarioInput);
      // The loader's parser: a case's name reads as `qpo run` reads it.
      scenario::ParsedText parsed;
      if (file && !scenario::find_deep_flow(file.text)) parsed = scenario::parse_yaml(file.text);
      const yaml::Node& n = parsed.root;
      if (n["name"].IsScalar()) c.name = n["name"].Scalar();
      if (n["tags"].IsSequence())
        for (const yaml::Node& t : n["tags"])
          if (t.IsScalar()) c.tags.push_back(t.Scalar());
      if (n["externals"].IsMap())
        for (const auto& e : n["externals"]) {
          if (e.first.IsScalar()) c.external = e.first.Scalar();
          break;
        }
      // Hosts that own a device take part (exec::active_hosts); a declared but unused host
      // must not send the whole suite into two lab guests per scenario.
      if (n["devices"].IsMap()) {
        std::set<std::string> owners;
        for (const auto& d : n["devices"])
          if (d.second["host"].IsScalar()) owners.insert(d.second["host"].Scalar());
        c.hosts = std::max<size_t>(1, owners.size());
      }
    } catch (const std::exception&) {
    }
    if (!o.tags.empty()) {
      bool any = false;
      for (const auto& t : o.tags) any |= std::find(c.tags.begin(), c.tags.end(), t) != c.tags.end();
      if (!any) continue;
    }
    // Every combination of the matrix is a case; --matrix's replaces the file's own.
    std::optional<Matrix> own = o.matrix_file.empty() ? read_matrix(f, false, sink) : std::nullopt;
    const Matrix* m = !o.matrix_file.empty() ? (shared ? &*shared : nullptr) : own ? &*own : nullptr;
    std::vector<Case> expanded;
    if (m) {
      for (auto& combination : expand(*m)) {
        Case mc = c;
        mc.name = c.name + combination.suffix();
        mc.parameters = std::move(combination.parameters);
        mc.overrides = std::move(combination.overrides);
        mc.origins = std::move(combination.origins);
        expanded.push_back(std::move(mc));
      }
    } else {
      expanded.push_back(std::move(c));
    }
    for (auto& e : expanded) {
      if (!o.name_filter.empty() && e.name.find(o.name_filter) == std::string::npos &&
          e.file.find(o.name_filter) == std::string::npos)
        continue;
      cases.push_back(std::move(e));
    }
  }
  return cases;
}

}  // namespace qpo::suite
