#pragma once
// `--set PATH=VALUE`: command-line edits applied to the scenario's YAML tree before the loader
// reads it, so an overridden value meets exactly the checks a value in the file meets. What an
// override put into the tree remembers the flag it came from, and diagnostics about it name the
// flag (`--set qps.qa.states.RTR.path_mtu=999`) where they would name a file line.
#include "scenario/yaml_tree.h"

#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "diag/diagnostic.h"
#include "util/source_text.h"

namespace qpo::scenario {

using util::SourceLoc;

// The nodes (values and created keys) that came from --set flags, each with where its flag
// is: {"--set PATH=VALUE", 0, 0}, or a matrix entry's line in its file (suite/matrix.h).
class OverrideOrigins {
 public:
  // `n` and, for a list or map, everything in it (each node once, however many aliases name it).
  void add(const yaml::Node& n, const SourceLoc& origin);
  // Where the override that put `n` into the tree is, or nullptr when `n` comes from the file.
  // A hash lookup: the loader asks this for every key and value it reads.
  const SourceLoc* origin_of(const yaml::Node& n) const;
  bool empty() const { return by_node_.empty(); }

 private:
  std::unordered_map<const void*, const SourceLoc*> by_node_;  // node identity -> its flag (later wins)
  std::vector<std::unique_ptr<SourceLoc>> origins_;  // stable addresses for origin_of
};

// A --set value is a few nodes; aliases can make a 1 KB value stand for billions (each list
// naming the previous one ten times), so a value that expands past this many is refused (Q114).
constexpr size_t kMaxOverrideValueNodes = 10000;

// What applying overrides cost, counted: every map entry the walk read (to index a map once,
// or to list its names in a hint). Linear in the file's entries plus the overrides' keys.
struct OverrideWork {
  size_t map_entries_read = 0;
};

// "--set " + `override`: how diagnostics and reports name an override.
std::string override_flag(const std::string& override);

// Applies each "PATH=VALUE" to `root` (a map), in order: PATH is dot-separated keys (list
// entries by index); VALUE is one YAML value (a scalar, or a flow list/map). A missing key is
// created, except past a missing object (`qps.qz.type` when there is no QP qz) or below a
// scalar. An override that cannot apply is reported (Q114) and skipped. `where[i]`, when
// given, is where override i was written (a matrix entry); else it is named by its flag.
// A value that contains itself through an alias (`&q [*q]`), or expands past
// kMaxOverrideValueNodes, is Q114 at its flag (or matrix entry) and is not applied.
OverrideWork apply_overrides(yaml::Node& root, const std::vector<std::string>& overrides, diag::DiagSink& sink,
                             OverrideOrigins& origins, const std::vector<SourceLoc>& where = {});

}  // namespace qpo::scenario
