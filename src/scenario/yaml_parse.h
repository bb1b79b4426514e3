#pragma once
// The first YAML document of a text, and whether another follows, in one pass of yaml-cpp's
// parser. YAML::Load cannot say whether a document follows, so the loader scanned the text
// twice (counting documents, then loading): yaml-cpp's scanner is nearly all of the cost of
// reading a large hand-written scenario, and the count doubled it.
#include <yaml-cpp/yaml.h>

#include <string>

namespace qpo::scenario {

struct ParsedText {
  YAML::Node root;        // the first document (null when there is none)
  size_t documents = 0;   // how many documents the stream holds (counting stops when stuck)
  YAML::Mark second;      // where the second document starts
  // yaml-cpp 0.7 reports a null document without moving on for some invalid input (a stray
  // ',' at the top level: jbeder/yaml-cpp#1040); a document that starts where the previous
  // one started means the parser is stuck there.
  bool stuck = false;
  YAML::Mark stuck_at;
};

// Throws what YAML::Load throws (YAML::Exception, YAML::DeepRecursion, std::bad_alloc).
ParsedText parse_yaml(const std::string& text);

}  // namespace qpo::scenario
