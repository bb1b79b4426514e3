#pragma once
// The first YAML document of a scenario text as a compact tree (scenario/yaml_tree.h), and
// whether another follows, in one pass of libyaml's parser (Debian's libyaml-0-2, the
// reference C parser).
//
// Why not yaml-cpp's parser: its scanner was ~90% of the CPU of validating a large
// hand-written scenario (10,000 QPs, 5.6 MB: ~2.5 s per pass; libyaml scans it in ~0.18 s).
#include <memory>
#include <stdexcept>
#include <string>

#include "scenario/yaml_tree.h"

namespace qpo::scenario {

struct ParsedText {
  std::shared_ptr<yaml::Tree> tree;  // owns every node: keep it while `root` is read
  yaml::Node root;                   // the first document (null when there is none)
  size_t documents = 0;              // how many documents the stream holds
  yaml::Mark second;                 // where the second document starts
};

// How deep collections may nest: the nodes are walked recursively after loading, so a deeper
// file would overflow the stack (yaml-cpp's own recursion guard stops at the same depth).
constexpr int kMaxYamlNesting = 2000;

// Collections nested past kMaxYamlNesting, at the one that went too deep. A std::exception
// like every error qpo throws, so a boundary's one catch takes it (docs/architecture.md section 4).
struct NestingTooDeep : std::runtime_error {
  NestingTooDeep(yaml::Mark at, int levels)
      : std::runtime_error("the YAML nests deeper than " + std::to_string(levels) + " levels"), mark(at), depth(levels) {}
  yaml::Mark mark;
  int depth;
};

// Throws yaml::ParseError (syntax, with libyaml's words and position), NestingTooDeep or
// std::bad_alloc (libyaml ran out of memory).
ParsedText parse_yaml(const std::string& text);

// One value (a --set or matrix value: a scalar, or a flow list or map) as nodes of `tree`,
// so it can be put into a scenario parsed there. The first document; throws as parse_yaml.
yaml::Node parse_value(yaml::Tree& tree, const std::string& text);

}  // namespace qpo::scenario
