#pragma once
// The first YAML document of a scenario text as yaml-cpp nodes, and whether another follows,
// in one pass of libyaml's parser (Debian's libyaml-0-2, the reference C parser).
//
// Why not yaml-cpp's own parser: its scanner was ~90% of the CPU of validating a large
// hand-written scenario (10,000 QPs, 5.6 MB: ~2.5 s per pass; libyaml scans it in ~0.18 s).
// The rest of qpo keeps reading yaml-cpp nodes: the builder here makes the nodes YAML::Load
// makes (marks, tags, styles, shared anchors), so the loader and its errors are unchanged.
#include <yaml-cpp/yaml.h>

#include <string>

namespace qpo::scenario {

struct ParsedText {
  YAML::Node root;       // the first document (null when there is none)
  size_t documents = 0;  // how many documents the stream holds
  YAML::Mark second;     // where the second document starts
};

// How deep collections may nest, as yaml-cpp's own recursion guard allows (its depth_guard):
// the nodes are walked recursively after loading, so a deeper file would overflow the stack.
constexpr int kMaxYamlNesting = 2000;

// Collections nested past kMaxYamlNesting, at the one that went too deep.
struct NestingTooDeep {
  YAML::Mark mark;
  int depth;
};

// Throws YAML::ParserException (syntax, with libyaml's words and position), NestingTooDeep or
// std::bad_alloc (libyaml ran out of memory).
ParsedText parse_yaml(const std::string& text);

}  // namespace qpo::scenario
