#include "scenario/overrides.h"

#include <algorithm>
#include <optional>

#include "scenario/flow_depth.h"
#include "util/strings.h"
#include "util/utf8.h"

namespace qpo::scenario {

namespace {

// Top-level sections that map object names to objects: an override may change an object, or
// add one, but a path that goes on past a name the section does not hold is a typo.
const std::vector<std::string>& object_sections() {
  static const std::vector<std::string> k{"hosts", "devices", "pds",       "mrs",    "cqs",
                                          "srqs",  "xrcds",   "workloads", "faults", "qps"};
  return k;
}

// Past this many names, the hint counts them instead of listing them.
constexpr size_t kNamesListed = 20;

class Applier {
 public:
  Applier(const SourceLoc& origin, diag::DiagSink& sink, OverrideOrigins& origins)
      : flag_(origin), sink_(sink), origins_(origins) {}

  void apply(YAML::Node& root, const std::string& text) {
    size_t eq = text.find('=');
    if (eq == std::string::npos) {
      auto& d = error("", "--set takes PATH=VALUE; '" + text + "' has no '='");
      d.hint = "e.g. --set qps.qa.states.RTR.path_mtu=1024";
      return;
    }
    path_ = std::string(util::trim(std::string_view(text).substr(0, eq)));
    std::vector<std::string> keys;
    for (auto part : util::split(path_, '.')) keys.emplace_back(part);
    if (path_.empty() || std::any_of(keys.begin(), keys.end(), [](const std::string& k) { return k.empty(); })) {
      auto& d = error(path_, "--set path '" + path_ + "' has an empty key");
      d.hint = "write the keys from the top of the file, separated by single dots: qps.qa.type";
      return;
    }
    auto value = parse_value(std::string(util::trim(std::string_view(text).substr(eq + 1))));
    if (!value) return;
    join_dotted_name(root, keys);
    set(root, keys, *value);
  }

 private:
  diag::Diagnostic& error(const std::string& path, const std::string& message) {
    auto& d = sink_.error("Q114", flag_, path, message);
    d.rule = "--set PATH=VALUE changes or adds one key of the scenario";
    return d;
  }

  std::optional<YAML::Node> parse_value(const std::string& text) {
    if (text.empty()) {
      auto& d = error(path_, "--set " + path_ + "= has no value after '='");
      d.hint = "write '' for an empty string";
      return std::nullopt;
    }
    // The same refusals as for a file: yaml-cpp must not see these.
    if (auto bad = util::find_encoding_problem(text)) {
      error(path_, "the value is not UTF-8 text: " + bad->found);
      return std::nullopt;
    }
    if (find_deep_flow(text)) {
      error(path_, "the value nests [ ] and { } deeper than " + std::to_string(kMaxFlowDepth) + " levels");
      return std::nullopt;
    }
    try {
      return YAML::Load(text);
    } catch (const YAML::Exception& e) {
      auto& d = error(path_, "the value is not YAML: " + e.msg);
      d.hint = "a number, a word, true/false, or a flow list/map like [a, b] or { x: 1 }; quote text with spaces";
      return std::nullopt;
    }
  }

  // Object names may hold dots (`q.1`): in an object section, the longest run of keys that
  // names an object of the file is that object's name.
  static void join_dotted_name(const YAML::Node& root, std::vector<std::string>& keys) {
    if (keys.size() < 3 || !is_object_section(keys[0])) return;
    const YAML::Node section = root[keys[0]];
    if (!section || !section.IsMap()) return;
    for (size_t end = keys.size(); end > 2; --end) {
      std::vector<std::string> parts(keys.begin() + 1, keys.begin() + static_cast<long>(end));
      std::string name = util::join(parts, ".");
      if (!section[name]) continue;
      keys.erase(keys.begin() + 1, keys.begin() + static_cast<long>(end));
      keys.insert(keys.begin() + 1, name);
      return;
    }
  }

  static bool is_object_section(const std::string& key) {
    const auto& s = object_sections();
    return std::find(s.begin(), s.end(), key) != s.end();
  }

  void set(YAML::Node& root, const std::vector<std::string>& keys, const YAML::Node& value) {
    YAML::Node at;  // where the walk is; reset() moves it (assignment would overwrite the node)
    at.reset(root);
    std::string walked;
    for (size_t i = 0; i < keys.size(); ++i) {
      const std::string& key = keys[i];
      bool last = i + 1 == keys.size();
      std::string here = walked.empty() ? key : walked + "." + key;
      if (at.IsSequence()) {
        auto index = util::parse_uint(key);
        if (!index || *index >= at.size()) {
          auto& d = error(path_, walked + " is a list of " + std::to_string(at.size()) + " entries; '" + key +
                                     "' is not one of its indexes");
          d.hint = at.size() ? "use an index from 0 to " + std::to_string(at.size() - 1) : "the list is empty";
          return;
        }
        if (last) {
          at[*index] = value;
          origins_.add(value, flag_);
          return;
        }
        YAML::Node next = at[*index];
        at.reset(next);
      } else if (at.IsMap() || at.IsNull()) {
        const YAML::Node& view = at;  // const lookups never add keys
        YAML::Node existing = at.IsMap() ? view[key] : YAML::Node(YAML::NodeType::Undefined);
        bool found = at.IsMap() && existing.IsDefined();
        if (!found && i == 1 && !last && is_object_section(keys[0])) {
          unknown_object(at, keys[0], key);
          return;
        }
        if (last) {
          at[key] = value;
          origins_.add(value, flag_);
          if (!found) add_key_origin(at, key);
          return;
        }
        if (!found || existing.IsNull()) {
          YAML::Node created(YAML::NodeType::Map);
          at[key] = created;
          origins_.add(created, flag_);
          if (!found) add_key_origin(at, key);
        }
        YAML::Node next = at[key];
        at.reset(next);
      } else {
        auto& d = error(path_, walked + " is " + node_text(at) + ", not a map: there is no '" + key + "' under it to set");
        d.hint = "set " + walked + " itself, e.g. --set " + walked + "=VALUE";
        return;
      }
      walked = here;
    }
  }

  static std::string node_text(const YAML::Node& n) {
    return n.IsScalar() ? "'" + n.Scalar().substr(0, 40) + "'" : "a value";
  }

  // The key node a new map entry got: Q101 on a misspelt new key points at the flag too.
  void add_key_origin(const YAML::Node& map, const std::string& key) {
    for (const auto& kv : map)
      if (kv.first.IsScalar() && kv.first.Scalar() == key) origins_.add(kv.first, flag_);
  }

  void unknown_object(const YAML::Node& section, const std::string& section_name, const std::string& name) {
    std::vector<std::string> names;
    if (section.IsMap())
      for (const auto& kv : section)
        if (kv.first.IsScalar()) names.push_back(kv.first.Scalar());
    if (names.empty()) {
      auto& d = error(path_, "'" + name + "' is not defined in " + section_name + ": the scenario has no " +
                                 section_name + " entries");
      d.hint = "--set adds keys to an existing object; write the object in the file";
      return;
    }
    auto& d = error(path_, "'" + name + "' is not defined in " + section_name + ":");
    auto guess = names.size() <= 2000 ? util::did_you_mean(name, names) : "";
    if (!guess.empty()) d.hint = "did you mean '" + guess + "'? ";
    if (names.size() <= kNamesListed) d.hint += "known: " + util::join(names, ", ");
    else d.hint += "see the " + std::to_string(names.size()) + " names under " + section_name + ":";
  }

  SourceLoc flag_;
  std::string path_;
  diag::DiagSink& sink_;
  OverrideOrigins& origins_;
};

}  // namespace

void OverrideOrigins::add(const YAML::Node& n, const SourceLoc& flag) {
  const SourceLoc* last = origins_.empty() ? nullptr : origins_.back().get();
  if (!last || last->file != flag.file || last->line != flag.line || last->col != flag.col)
    origins_.push_back(std::make_unique<SourceLoc>(flag));
  nodes_.emplace_back(n, origins_.back().get());
  if (n.IsSequence())
    for (const auto& item : n) add(item, flag);
  else if (n.IsMap())
    for (const auto& kv : n) {
      add(kv.first, flag);
      add(kv.second, flag);
    }
}

const SourceLoc* OverrideOrigins::origin_of(const YAML::Node& n) const {
  // Later overrides win: the same key set twice is the last flag's.
  for (auto it = nodes_.rbegin(); it != nodes_.rend(); ++it)
    if (it->first.is(n)) return it->second;
  return nullptr;
}

std::string override_flag(const std::string& override) { return "--set " + override; }

void apply_overrides(YAML::Node& root, const std::vector<std::string>& overrides, diag::DiagSink& sink,
                     OverrideOrigins& origins, const std::vector<SourceLoc>& where) {
  if (!root.IsMap()) return;  // the loader reports that; there is nowhere to apply them
  for (size_t i = 0; i < overrides.size(); ++i) {
    SourceLoc origin = i < where.size() && where[i].given() ? where[i] : SourceLoc{override_flag(overrides[i]), 0, 0};
    Applier(origin, sink, origins).apply(root, overrides[i]);
  }
}

}  // namespace qpo::scenario
