#pragma once
// A lexical pre-scan for flow nesting ([ and {), run before the YAML parser. It was written
// for yaml-cpp 0.7, which queued every token of an unfinished flow collection (16 MiB of '['
// took 2.9 GB and 17 s before std::bad_alloc); the loader now parses with libyaml
// (yaml_parse.h), and the 64-level limit stays a rule of the scenario format (Q111). The
// scan follows quoted and plain scalars, comments and block scalars (| and >) as a YAML
// parser reads them, so brackets in text do not count, and text cannot hide brackets from it.
#include <optional>
#include <string_view>

namespace qpo::scenario {

// Scenarios nest flow collections a few levels deep (`qps: { q: { cap: { ... } } }`).
constexpr int kMaxFlowDepth = 64;

struct DeepFlow {
  int line = 0;  // 1-based position of the bracket that passes the limit
  int col = 0;   // 1-based byte column
};

// Where flow nesting first goes deeper than `max_depth`, or nothing.
std::optional<DeepFlow> find_deep_flow(std::string_view text, int max_depth = kMaxFlowDepth);

}  // namespace qpo::scenario
