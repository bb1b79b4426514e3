#include "scenario/overrides.h"

#include <algorithm>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "scenario/flow_depth.h"
#include "scenario/yaml_parse.h"
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

// The nodes a list or map holds (a map's keys and values).
std::vector<yaml::Node> children_of(const yaml::Node& n) {
  std::vector<yaml::Node> out;
  if (n.IsSequence())
    for (const yaml::Node& item : n) out.push_back(item);
  else if (n.IsMap())
    for (const auto& kv : n) {
      out.push_back(kv.first);
      out.push_back(kv.second);
    }
  return out;
}

// What a parsed value holds once its aliases are followed, walked without recursion: whether
// it contains a node it is inside of (`&q [*q]`: no end), or more than `max_nodes` nodes.
enum class AliasExpansion { Finite, Cyclic, TooLarge };

AliasExpansion expand_aliases(const yaml::Node& value, size_t max_nodes) {
  struct Frame {
    const void* id;
    std::vector<yaml::Node> children;
    size_t next = 0;
  };
  std::vector<Frame> path;
  std::unordered_set<const void*> inside;  // the nodes of `path`
  size_t nodes = 1;
  path.push_back({value.identity(), children_of(value)});
  inside.insert(path.back().id);
  while (!path.empty()) {
    Frame& top = path.back();
    if (top.next == top.children.size()) {
      inside.erase(top.id);
      path.pop_back();
      continue;
    }
    yaml::Node child = top.children[top.next++];
    if (++nodes > max_nodes) return AliasExpansion::TooLarge;
    const void* id = child.identity();
    if (inside.count(id)) return AliasExpansion::Cyclic;
    if (!child.IsSequence() && !child.IsMap()) continue;
    path.push_back({id, children_of(child)});
    inside.insert(id);
  }
  return AliasExpansion::Finite;
}

// A map's entries by key, read once: finding a key scans the map, and 20,000 paths into a
// section of 10,000 names did that 2 * 10^8 times.
struct MapIndex {
  struct Entry {
    size_t position;   // the entry's place in the map, to set its value
    yaml::Node value;  // what it holds now
  };
  std::unordered_map<std::string, Entry> entries;
};

class Applier {
 public:
  Applier(yaml::Tree& tree, diag::DiagSink& sink, OverrideOrigins& origins) : tree_(&tree), sink_(sink), origins_(origins) {}

  const OverrideWork& work() const { return work_; }

  void apply(yaml::Node& root, const std::string& text, const SourceLoc& origin) {
    flag_ = origin;
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

  std::optional<yaml::Node> parse_value(const std::string& text) {
    if (text.empty()) {
      auto& d = error(path_, "--set " + path_ + "= has no value after '='");
      d.hint = "write '' for an empty string";
      return std::nullopt;
    }
    // The same refusals as for a file.
    if (auto bad = util::find_encoding_problem(text)) {
      error(path_, "the value is not UTF-8 text: " + bad->found);
      return std::nullopt;
    }
    if (find_deep_flow(text)) {
      error(path_, "the value nests [ ] and { } deeper than " + std::to_string(kMaxFlowDepth) + " levels");
      return std::nullopt;
    }
    yaml::Node value;
    try {
      value = scenario::parse_value(*tree_, text);
    } catch (const yaml::ParseError& e) {
      auto& d = error(path_, "the value is not YAML: " + e.msg);
      d.hint = "a number, a word, true/false, or a flow list/map like [a, b] or { x: 1 }; quote text with spaces";
      return std::nullopt;
    } catch (const NestingTooDeep& e) {  // block nesting (a value over several lines): not bounded by find_deep_flow
      error(path_, "the value nests deeper than " + std::to_string(e.depth) + " levels");
      return std::nullopt;
    }
    switch (expand_aliases(value, kMaxOverrideValueNodes)) {
      case AliasExpansion::Finite: return value;
      case AliasExpansion::Cyclic: {
        auto& d = error(path_, "the value contains itself through an alias (an anchor's '*' inside its own '&' value): "
                               "it has no end");
        d.hint = "write the value out without the alias";
        return std::nullopt;
      }
      case AliasExpansion::TooLarge: {
        auto& d = error(path_, "the value's aliases expand to more than " + std::to_string(kMaxOverrideValueNodes) +
                                   " nodes");
        d.hint = "a --set value is a scalar or a small list or map: write it out without aliases";
        return std::nullopt;
      }
    }
    return std::nullopt;
  }

  MapIndex& index_of(const yaml::Node& map) {
    auto [it, fresh] = indexes_.try_emplace(map.identity());
    MapIndex& index = it->second;
    if (!fresh) return index;
    size_t position = 0;
    if (map.IsMap())
      for (const auto& kv : map) {
        ++work_.map_entries_read;
        // The first of two equal keys, as a lookup by key finds it (the loader reports Q105).
        if (kv.first.IsScalar()) index.entries.try_emplace(kv.first.Scalar(), MapIndex::Entry{position, kv.second});
        ++position;
      }
    return index;
  }

  // Sets `key` of `map` (a map, or null: it becomes one) to `value`, remembering the flag.
  // Returns whether the key was new.
  bool put(yaml::Node& map, const std::string& key, const yaml::Node& value) {
    MapIndex& index = index_of(map);
    origins_.add(value, flag_);
    if (auto it = index.entries.find(key); it != index.entries.end()) {
      map.set_map_value(it->second.position, value);
      it->second.value = value;
      return false;
    }
    yaml::Node k = tree_->new_scalar(key, "?");
    size_t position = map.size();
    map.append_entry(k, value);  // appended without searching: the index said it is new
    origins_.add(k, flag_);      // Q101 on a misspelt new key points at the flag too
    index.entries.emplace(key, MapIndex::Entry{position, value});
    return true;
  }

  // Object names may hold dots (`q.1`): in an object section, the longest run of keys that
  // names an object of the file is that object's name.
  void join_dotted_name(const yaml::Node& root, std::vector<std::string>& keys) {
    if (keys.size() < 3 || !is_object_section(keys[0]) || !root.IsMap()) return;
    const auto& top = index_of(root).entries;
    auto found = top.find(keys[0]);
    if (found == top.end() || !found->second.value.IsMap()) return;
    const auto& section = index_of(found->second.value).entries;
    for (size_t end = keys.size(); end > 2; --end) {
      std::vector<std::string> parts(keys.begin() + 1, keys.begin() + static_cast<long>(end));
      std::string name = util::join(parts, ".");
      if (!section.count(name)) continue;
      keys.erase(keys.begin() + 1, keys.begin() + static_cast<long>(end));
      keys.insert(keys.begin() + 1, name);
      return;
    }
  }

  static bool is_index(const std::string& key) {
    return std::all_of(key.begin(), key.end(), [](char c) { return c >= '0' && c <= '9'; });
  }

  static bool is_object_section(const std::string& key) {
    const auto& s = object_sections();
    return std::find(s.begin(), s.end(), key) != s.end();
  }

  void set(yaml::Node& root, const std::vector<std::string>& keys, const yaml::Node& value) {
    yaml::Node at = root;  // where the walk is
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
          at.set_item(*index, value);
          origins_.add(value, flag_);
          return;
        }
        at = at[*index];
      } else if (at.IsMap() || at.IsNull()) {
        const auto& entries = index_of(at).entries;
        auto entry = entries.find(key);
        bool found = entry != entries.end();
        if (!found && i == 1 && !last && is_object_section(keys[0])) {
          unknown_object(at, keys[0], key);
          return;
        }
        if (last) {
          put(at, key, value);
          return;
        }
        if (!found && is_index(keys[i + 1])) {
          // A map made here would hold key '1' where the scenario wants a list (Q102 after).
          auto& d = error(path_, "there is no list '" + here + "' in the scenario to take entry " + keys[i + 1] + " of");
          d.hint = "--set changes an entry of a list the file writes; to write the whole list: --set " + here + "=[...]";
          return;
        }
        yaml::Node next;
        if (found && !entry->second.value.IsNull()) {
          next = entry->second.value;
        } else {
          next = tree_->new_collection(yaml::NodeType::Map, "?", false);
          put(at, key, next);
        }
        at = next;
      } else {
        auto& d = error(path_, walked + " is " + node_text(at) + ", not a map: there is no '" + key + "' under it to set");
        d.hint = "set " + walked + " itself, e.g. --set " + walked + "=VALUE";
        return;
      }
      walked = here;
    }
  }

  static std::string node_text(const yaml::Node& n) {
    return n.IsScalar() ? "'" + n.Scalar().substr(0, 40) + "'" : "a value";
  }

  void unknown_object(const yaml::Node& section, const std::string& section_name, const std::string& name) {
    std::vector<std::string> names;
    if (section.IsMap())
      for (const auto& kv : section) {
        ++work_.map_entries_read;
        if (kv.first.IsScalar()) names.push_back(kv.first.Scalar());
      }
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

  yaml::Tree* tree_;  // where values and created keys are put
  SourceLoc flag_;
  std::string path_;
  diag::DiagSink& sink_;
  OverrideOrigins& origins_;
  std::unordered_map<const void*, MapIndex> indexes_;  // by the map's identity, built on first use
  OverrideWork work_;
};

}  // namespace

void OverrideOrigins::add(const yaml::Node& n, const SourceLoc& flag) {
  const SourceLoc* last = origins_.empty() ? nullptr : origins_.back().get();
  if (!last || last->file != flag.file || last->line != flag.line || last->col != flag.col)
    origins_.push_back(std::make_unique<SourceLoc>(flag));
  const SourceLoc* origin = origins_.back().get();
  // Without recursion, and each node once: a value's aliases may name one node many times.
  std::unordered_set<const void*> seen;
  std::vector<yaml::Node> todo{n};
  while (!todo.empty()) {
    yaml::Node at = todo.back();
    todo.pop_back();
    const void* id = at.identity();
    if (!id || !seen.insert(id).second) continue;
    by_node_[id] = origin;  // later overrides win: the same key set twice is the last flag's
    for (auto& child : children_of(at)) todo.push_back(std::move(child));
  }
}

const SourceLoc* OverrideOrigins::origin_of(const yaml::Node& n) const {
  auto it = by_node_.find(n.identity());
  return it == by_node_.end() ? nullptr : it->second;
}

std::string override_flag(const std::string& override) { return "--set " + override; }

OverrideWork apply_overrides(yaml::Node& root, const std::vector<std::string>& overrides, diag::DiagSink& sink,
                             OverrideOrigins& origins, const std::vector<SourceLoc>& where) {
  if (!root.IsMap() || !root.tree()) return {};  // the loader reports that; there is nowhere to apply them
  Applier applier(*root.tree(), sink, origins);  // one for all: the maps it indexes serve every override
  for (size_t i = 0; i < overrides.size(); ++i) {
    SourceLoc origin = i < where.size() && where[i].given() ? where[i] : SourceLoc{override_flag(overrides[i]), 0, 0};
    applier.apply(root, overrides[i], origin);
  }
  return applier.work();
}

}  // namespace qpo::scenario
