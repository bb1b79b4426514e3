#pragma once
// A lexical pre-scan for flow nesting ([ and {), run before yaml-cpp parses. yaml-cpp 0.7
// queues every token of an unfinished flow collection while it decides whether it is a
// simple key, ~180 bytes per '[': 16 MiB of '[' took 2.9 GB and 17 s before it failed with
// std::bad_alloc. Its own recursion guard only counts parser levels, after scanning. The
// scan follows quoted and plain scalars, comments and block scalars (| and >) as yaml-cpp
// reads them, so brackets in text do not count, and text cannot hide brackets from it.
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
