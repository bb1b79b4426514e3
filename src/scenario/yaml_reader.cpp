#include "scenario/yaml_reader.h"

#include <algorithm>
#include <unordered_map>

#include "util/strings.h"
#include "util/units.h"

namespace qpo::scenario {

std::string node_kind(const yaml::Node& n) {
  switch (n.Type()) {
    case yaml::NodeType::Null: return "nothing";
    case yaml::NodeType::Scalar: return "'" + n.Scalar().substr(0, 40) + "'";
    case yaml::NodeType::Sequence: return "a list";
    case yaml::NodeType::Map: return "a map";
    default: return "an undefined node";
  }
}

std::string join_path(const std::string& base, const std::string& key) {
  return base.empty() ? key : base + "." + key;
}

SourceLoc YamlReader::loc(const yaml::Node& n) const {
  if (origins_)
    if (const auto* origin = origins_->origin_of(n)) return *origin;
  const auto mark = n.Mark();
  if (mark.is_null()) return {file_, 0, 0};
  return {file_, mark.line + 1, mark.column + 1};
}

diag::Diagnostic& YamlReader::wrong_type(const yaml::Node& n, const std::string& path, const char* expected) {
  auto& d = sink_.error("Q102", loc(n), path, std::string("expected ") + expected + ", found " + node_kind(n));
  d.rule = "scenario schema: value type";
  return d;
}

bool YamlReader::is_map(const yaml::Node& n, const std::string& path, const char* what) {
  if (n.IsMap()) return true;
  wrong_type(n, path, what);
  return false;
}

std::vector<std::pair<std::string, yaml::Node>> YamlReader::entries(const yaml::Node& map, const std::string& path,
                                                                    const std::vector<std::string>* allowed,
                                                                    const char* what) {
  std::vector<std::pair<std::string, yaml::Node>> out;
  for (auto& e : keyed_entries(map, path, allowed, what)) out.emplace_back(std::move(e.key), std::move(e.value));
  return out;
}

std::vector<YamlReader::KeyedEntry> YamlReader::keyed_entries(const yaml::Node& map, const std::string& path,
                                                              const std::vector<std::string>* allowed,
                                                              const char* what) {
  std::vector<KeyedEntry> out;
  if (!is_map(map, path, what)) return out;
  std::unordered_map<std::string, SourceLoc> seen;
  for (const auto& kv : map) {
    if (!kv.first.IsScalar()) {
      wrong_type(kv.first, path, "a plain name as key");
      continue;
    }
    std::string key = kv.first.Scalar();
    auto key_loc = loc(kv.first);
    std::string key_path = join_path(path, key);
    if (auto it = seen.find(key); it != seen.end()) {
      auto& d = sink_.error("Q105", key_loc, key_path, "duplicate key '" + key + "'");
      d.rule = "YAML: keys in a map must be unique (the second one would silently win)";
      d.related.push_back({it->second, "first defined here"});
      d.hint = "remove or rename one of them";
      continue;
    }
    seen[key] = key_loc;
    if (allowed && std::find(allowed->begin(), allowed->end(), key) == allowed->end()) {
      auto& d = sink_.error("Q101", key_loc, key_path, "unknown key '" + key + "' in " + what);
      d.rule = "scenario schema: allowed keys";
      auto guess = util::did_you_mean(key, *allowed);
      d.hint = guess.empty() ? "allowed keys: " + util::join(*allowed, ", ") : "did you mean '" + guess + "'?";
      continue;
    }
    out.push_back({std::move(key), key_loc, kv.second});
  }
  return out;
}

std::optional<std::string> YamlReader::string(const yaml::Node& n, const std::string& path) {
  if (!n.IsScalar()) {
    wrong_type(n, path, "a string");
    return std::nullopt;
  }
  return n.Scalar();
}

std::optional<uint64_t> YamlReader::uint(const yaml::Node& n, const std::string& path, uint64_t max) {
  if (!n.IsScalar()) {
    wrong_type(n, path, "a non-negative integer");
    return std::nullopt;
  }
  auto v = util::parse_uint(util::trim(n.Scalar()));
  if (!v) {
    auto& d = sink_.error("Q103", loc(n), path, "'" + n.Scalar().substr(0, 40) + "' is not a non-negative integer");
    d.rule = "scenario schema: integer";
    d.hint = "write a decimal or 0x-hex number (it must fit in 64 bits)";
    return std::nullopt;
  }
  if (*v > max) {
    auto& d = sink_.error("Q401", loc(n), path, n.Scalar() + " is too large (maximum " + std::to_string(max) + ")");
    d.rule = "value range";
    return std::nullopt;
  }
  return v;
}

std::optional<bool> YamlReader::boolean(const yaml::Node& n, const std::string& path) {
  if (n.IsScalar()) {
    std::string s = util::to_lower(n.Scalar());
    if (s == "true" || s == "yes" || s == "on") return true;
    if (s == "false" || s == "no" || s == "off") return false;
  }
  wrong_type(n, path, "true or false");
  return std::nullopt;
}

std::optional<uint64_t> YamlReader::size(const yaml::Node& n, const std::string& path) {
  if (!n.IsScalar()) {
    wrong_type(n, path, "a size such as 4096 or 64KiB");
    return std::nullopt;
  }
  std::string why, hint;
  auto size = util::parse_size(n.Scalar(), &why, &hint);
  if (!size) {
    auto& d = sink_.error("Q103", loc(n), path, why);
    d.rule = "scenario schema: size units";
    d.hint = hint;
  }
  return size;
}

Ref YamlReader::ref(const yaml::Node& n, const std::string& path) {
  auto s = string(n, path);
  if (!s) return {};
  return Ref{*s, loc(n)};
}

std::optional<std::vector<std::string>> YamlReader::string_list(const yaml::Node& n, const std::string& path) {
  std::vector<std::string> out;
  if (n.IsScalar()) {
    out.push_back(n.Scalar());
    return out;
  }
  if (!n.IsSequence()) {
    wrong_type(n, path, "a list of names");
    return std::nullopt;
  }
  for (size_t i = 0; i < n.size(); ++i) {
    auto s = string(n[i], path + "[" + std::to_string(i) + "]");
    if (s) out.push_back(*s);
  }
  return out;
}

}  // namespace qpo::scenario
