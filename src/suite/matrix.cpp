#include "suite/matrix.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "scenario/flow_depth.h"
#include "util/input_file.h"
#include "util/strings.h"

namespace qpo::suite {

namespace {

using util::SourceLoc;

SourceLoc loc_of(const YAML::Node& n, const std::string& file) {
  const auto m = n.Mark();
  if (m.is_null()) return {file, 0, 0};
  return {file, m.line + 1, m.column + 1};
}

const char* kRule = "matrix: PARAMETER: [VALUES] or NAME: { set: PATH or [PATHS], values: [VALUES] }";

diag::Diagnostic& bad(diag::DiagSink& sink, const SourceLoc& at, const std::string& path, const std::string& message) {
  auto& d = sink.error("Q160", at, path, message);
  d.rule = kRule;
  return d;
}

// A parameter's name goes into case names and file names (baselines): the characters of
// object names.
bool good_name(const std::string& s) {
  if (s.empty() || s.size() > 64) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
  });
}

bool good_path(const std::string& p) {
  if (p.empty() || p.front() == '.' || p.back() == '.' || p.find("..") != std::string::npos) return false;
  return p.find_first_of("= \t\n") == std::string::npos;
}

std::string flow_text(const YAML::Node& n) {
  YAML::Emitter e;
  e.SetMapFormat(YAML::Flow);
  e.SetSeqFormat(YAML::Flow);
  e << n;
  return e.c_str();
}

std::optional<MatrixValue> read_value(const YAML::Node& n, const std::string& file, const std::string& path,
                                      diag::DiagSink& sink) {
  MatrixValue v;
  v.loc = loc_of(n, file);
  if (n.IsNull()) {
    auto& d = bad(sink, v.loc, path, "a matrix value is empty");
    d.hint = "write '' for an empty string";
    return std::nullopt;
  }
  v.text = flow_text(n);
  v.display = n.IsScalar() ? n.Scalar() : v.text;
  return v;
}

std::optional<std::vector<std::string>> read_paths(const YAML::Node& n, const std::string& file, const std::string& path,
                                                   diag::DiagSink& sink) {
  std::vector<YAML::Node> items;
  if (n.IsScalar()) items.push_back(n);
  else if (n.IsSequence() && n.size() > 0)
    for (const auto& i : n) items.push_back(i);
  else {
    auto& d = bad(sink, loc_of(n, file), path, "'set:' takes an override path or a list of them");
    d.hint = "e.g. set: [qps.qa.states.RTR.path_mtu, qps.qb.states.RTR.path_mtu]";
    return std::nullopt;
  }
  std::vector<std::string> out;
  for (const auto& i : items) {
    if (!i.IsScalar() || !good_path(i.Scalar())) {
      auto& d = bad(sink, loc_of(i, file), path, "'" + (i.IsScalar() ? i.Scalar() : std::string("a list or map")) +
                                                      "' is not an override path");
      d.hint = "keys from the top of the scenario, separated by single dots, as --set takes them: workloads.bw.size";
      return std::nullopt;
    }
    out.push_back(i.Scalar());
  }
  return out;
}

}  // namespace

size_t Matrix::combinations() const {
  size_t n = 1;
  for (const auto& p : parameters) n *= p.values.size();
  return parameters.empty() ? 0 : n;
}

std::string Combination::suffix() const {
  std::string s = "[";
  for (size_t i = 0; i < parameters.size(); ++i) s += (i ? "," : "") + parameters[i].first + "=" + parameters[i].second;
  return s + "]";
}

std::optional<Matrix> parse_matrix(const YAML::Node& node, const std::string& file, diag::DiagSink& sink) {
  Matrix m;
  m.loc = loc_of(node, file);
  if (!node.IsMap() || node.size() == 0) {
    auto& d = bad(sink, m.loc, "matrix", "'matrix:' takes a map of parameters, found " +
                                             std::string(node.IsMap() ? "an empty map" : node.IsSequence() ? "a list" : "a scalar"));
    d.hint = "e.g. matrix: { workloads.bw.size: [4KiB, 64KiB] }";
    return std::nullopt;
  }
  size_t before = sink.error_count();
  for (const auto& kv : node) {
    if (!kv.first.IsScalar()) {
      bad(sink, loc_of(kv.first, file), "matrix", "a parameter's key must be a name or a path");
      continue;
    }
    Parameter p;
    std::string key = kv.first.Scalar();
    std::string path = "matrix." + key;
    p.loc = loc_of(kv.first, file);
    YAML::Node values;
    if (kv.second.IsSequence()) {
      // Shorthand: the key is the path; the path's last key names the parameter.
      if (!good_path(key)) {
        auto& d = bad(sink, p.loc, path, "'" + key + "' is not an override path");
        d.hint = "keys from the top of the scenario, separated by single dots: workloads.bw.size";
        continue;
      }
      p.paths = {key};
      p.name = key.substr(key.rfind('.') + 1);
      values = kv.second;
    } else if (kv.second.IsMap()) {
      p.name = key;
      if (!good_name(key)) {
        auto& d = bad(sink, p.loc, path, "parameter name '" + key + "' is not 1-64 characters from [A-Za-z0-9_.-]");
        d.hint = "the name goes into case names and baseline file names";
        continue;
      }
      bool ok = true;
      for (const auto& f : kv.second) {
        std::string k = f.first.IsScalar() ? f.first.Scalar() : "";
        if (k == "set") {
          auto paths = read_paths(f.second, file, path + ".set", sink);
          if (paths) p.paths = *paths;
          else ok = false;
        } else if (k == "values") {
          values = f.second;
        } else {
          auto& d = sink.error("Q101", loc_of(f.first, file), path, "unknown key '" + k + "' in a matrix parameter");
          d.rule = kRule;
          d.hint = "a parameter has 'set:' and 'values:'";
          ok = false;
        }
      }
      if (!ok) continue;
      if (p.paths.empty()) {
        auto& d = sink.error("Q104", p.loc, path, "matrix parameter '" + key + "' has no 'set:'");
        d.rule = kRule;
        d.hint = "set: the override path (or paths) its values go to";
        continue;
      }
    } else {
      auto& d = bad(sink, loc_of(kv.second, file), path, "a matrix parameter takes a list of values or { set:, values: }");
      d.hint = "e.g. " + key + ": [1024, 4096]";
      continue;
    }
    if (!values || !values.IsSequence() || values.size() == 0) {
      auto& d = bad(sink, values ? loc_of(values, file) : p.loc, path + ".values",
                    "matrix parameter '" + p.name + "' needs a non-empty list of values");
      d.hint = "e.g. values: [1024, 4096]";
      continue;
    }
    bool ok = true;
    std::set<std::string> seen;
    for (const auto& v : values) {
      auto mv = read_value(v, file, path, sink);
      if (!mv) {
        ok = false;
        continue;
      }
      if (!seen.insert(mv->display).second) {
        auto& d = sink.error("Q161", mv->loc, path, "value '" + util::printable(mv->display, 80) + "' is listed twice for '" +
                                                         p.name + "': two cases would have one name");
        d.rule = "every combination is a case of its own, named by its values";
        ok = false;
        continue;
      }
      p.values.push_back(std::move(*mv));
    }
    if (ok) m.parameters.push_back(std::move(p));
  }
  // Two parameters with one name, or setting one path: the case names or the values would clash.
  for (size_t i = 0; i < m.parameters.size(); ++i)
    for (size_t j = 0; j < i; ++j) {
      const auto& a = m.parameters[j];
      const auto& b = m.parameters[i];
      if (a.name == b.name) {
        auto& d = sink.error("Q161", b.loc, "matrix", "two matrix parameters are named '" + b.name + "'");
        d.rule = "parameters name the cases: one name each";
        d.related.push_back({a.loc, "the first is here"});
        d.hint = "give one a name of its own: NAME: { set: " + b.paths[0] + ", values: [...] }";
      }
      for (const auto& path : b.paths)
        if (std::find(a.paths.begin(), a.paths.end(), path) != a.paths.end()) {
          auto& d = sink.error("Q161", b.loc, "matrix", "'" + path + "' is set by two matrix parameters ('" + a.name +
                                                           "' and '" + b.name + "')");
          d.rule = "one parameter per path: the second would overwrite the first";
          d.related.push_back({a.loc, "the first is here"});
        }
    }
  if (sink.error_count() > before) return std::nullopt;
  // The product, without overflowing: stop counting past the limit.
  size_t n = 1;
  for (const auto& p : m.parameters) {
    n *= p.values.size();
    if (n > kMaxCombinations) {
      auto& d = sink.error("Q162", m.loc, "matrix", "the matrix has more than " + std::to_string(kMaxCombinations) +
                                                       " combinations (every one is a run)");
      d.rule = "at most " + std::to_string(kMaxCombinations) + " combinations per matrix";
      d.hint = "split it into several files, or fewer values per parameter";
      return std::nullopt;
    }
  }
  return m;
}

std::optional<Matrix> read_matrix(const std::string& path, bool required, diag::DiagSink& sink) {
  auto file = util::read_input_file(path, util::kMatrixInput);
  if (!file) {
    if (required) bad(sink, {path, 0, 0}, "", file.error);
    return std::nullopt;
  }
  // A scenario file's own nesting limit (the loader reports it for scenarios): checked before parsing.
  if (scenario::find_deep_flow(file.text)) {
    if (required) bad(sink, {path, 0, 0}, "", path + " nests too deep for a matrix file");
    return std::nullopt;
  }
  YAML::Node root;
  try {
    root = YAML::Load(file.text);
  } catch (const std::exception&) {
    if (required) bad(sink, {path, 0, 0}, "", path + " is not YAML");
    return std::nullopt;
  }
  if (!root.IsMap() || !root["matrix"]) {
    if (required) {
      auto& d = bad(sink, {path, 0, 0}, "", path + " has no 'matrix:' section");
      d.hint = "matrix: { workloads.bw.size: [4KiB, 64KiB] }";
    }
    return std::nullopt;
  }
  return parse_matrix(root["matrix"], path, sink);
}

std::vector<Combination> expand(const Matrix& m) {
  std::vector<Combination> out;
  size_t total = m.combinations();
  if (!total) return out;
  out.reserve(total);
  std::vector<size_t> at(m.parameters.size(), 0);
  for (size_t k = 0; k < total; ++k) {
    Combination c;
    for (size_t i = 0; i < m.parameters.size(); ++i) {
      const auto& p = m.parameters[i];
      const auto& v = p.values[at[i]];
      c.parameters.emplace_back(p.name, v.display);
      for (const auto& path : p.paths) {
        c.overrides.push_back(path + "=" + v.text);
        c.origins.push_back(v.loc);
      }
    }
    out.push_back(std::move(c));
    // Odometer: the last parameter changes fastest.
    for (size_t i = m.parameters.size(); i-- > 0;) {
      if (++at[i] < m.parameters[i].values.size()) break;
      at[i] = 0;
    }
  }
  return out;
}

}  // namespace qpo::suite
