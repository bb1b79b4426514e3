#pragma once
// Typed, diagnosing access to the scenario's YAML nodes (yaml_tree.h). Every problem becomes a Diagnostic with the
// node's file:line:col and YAML path; getters return nullopt after reporting, so the loader
// keeps going and reports everything in one run.
#include "scenario/yaml_tree.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "diag/diagnostic.h"
#include "scenario/model.h"
#include "scenario/overrides.h"

namespace qpo::scenario {

class YamlReader {
 public:
  YamlReader(std::string file, diag::DiagSink& sink) : file_(std::move(file)), sink_(sink) {}

  // Where `n` is written: file:line:col, or the --set flag that put it into the tree.
  SourceLoc loc(const yaml::Node& n) const;
  void set_override_origins(const OverrideOrigins* origins) { origins_ = origins && !origins->empty() ? origins : nullptr; }
  // Whether a --set flag or a matrix value put `n` into the tree.
  bool from_override(const yaml::Node& n) const { return origins_ && origins_->origin_of(n); }
  diag::DiagSink& sink() { return sink_; }
  const std::string& file() const { return file_; }

  // Map entries in file order. Reports non-string keys (Q102), duplicate keys (Q105) and,
  // when `allowed` is given, unknown keys (Q101 with did-you-mean). Skips the bad ones.
  std::vector<std::pair<std::string, yaml::Node>> entries(const yaml::Node& map, const std::string& path,
                                                          const std::vector<std::string>* allowed,
                                                          const char* what);
  // The same, with each key's position (callers that point at keys take it from here rather
  // than searching the map again per key, which made 20,000 keys take 40 s).
  struct KeyedEntry {
    std::string key;
    SourceLoc key_loc;
    yaml::Node value;
  };
  std::vector<KeyedEntry> keyed_entries(const yaml::Node& map, const std::string& path,
                                        const std::vector<std::string>* allowed, const char* what);
  bool is_map(const yaml::Node& n, const std::string& path, const char* what);

  std::optional<std::string> string(const yaml::Node& n, const std::string& path);
  std::optional<uint64_t> uint(const yaml::Node& n, const std::string& path, uint64_t max = UINT64_MAX);
  std::optional<bool> boolean(const yaml::Node& n, const std::string& path);
  std::optional<uint64_t> size(const yaml::Node& n, const std::string& path);
  Ref ref(const yaml::Node& n, const std::string& path);
  std::optional<std::vector<std::string>> string_list(const yaml::Node& n, const std::string& path);

  diag::Diagnostic& wrong_type(const yaml::Node& n, const std::string& path, const char* expected);

 private:
  std::string file_;
  diag::DiagSink& sink_;
  const OverrideOrigins* origins_ = nullptr;
};

std::string node_kind(const yaml::Node& n);
std::string join_path(const std::string& base, const std::string& key);

}  // namespace qpo::scenario
