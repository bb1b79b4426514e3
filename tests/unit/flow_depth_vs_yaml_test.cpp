// scenario::find_deep_flow against yaml-cpp itself: on random YAML-like text that yaml-cpp
// parses as one document, the scan must never see fewer levels of [ ] / { } than the parser
// built (an undercount is a way past the Q111 limit). Fixed seed: the same texts every run.
// The token mix is what fooled earlier versions of the scan: quotes inside plain scalars,
// '#' right after a quoted scalar, block scalars, empty keys, tags and anchors before keys.
#include <doctest/doctest.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "scenario/flow_depth.h"

namespace {

// The deepest nesting of flow collections written with a bracket (a `[a: b]` pair is an
// implicit flow map without one, and costs the scanner nothing).
struct FlowDepth : YAML::EventHandler {
  const std::string& text;
  std::vector<bool> bracketed;
  std::vector<int> starts;  // each open collection's position
  int depth = 0, deepest = 0;
  explicit FlowDepth(const std::string& t) : text(t) {}
  // `[[a]: b]`: the implicit map and its key `[a]` start at the same bracket; count it once.
  void open(const YAML::Mark& m, YAML::EmitterStyle::value style) {
    bool b = style == YAML::EmitterStyle::Flow && m.pos >= 0 && static_cast<size_t>(m.pos) < text.size() &&
             (text[static_cast<size_t>(m.pos)] == '[' || text[static_cast<size_t>(m.pos)] == '{') &&
             (starts.empty() || starts.back() != m.pos);
    bracketed.push_back(b);
    starts.push_back(m.pos);
    if (b) deepest = std::max(deepest, ++depth);
  }
  void close() {
    if (bracketed.back()) --depth;
    bracketed.pop_back();
    starts.pop_back();
  }
  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
  void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value s) override { open(m, s); }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value s) override { open(m, s); }
  void OnMapEnd() override { close(); }
};

// The smallest limit the scan accepts the text under: the depth it sees.
int scanned_depth(const std::string& text) {
  int limit = 0;
  while (qpo::scenario::find_deep_flow(text, limit)) ++limit;
  return limit;
}

}  // namespace

TEST_CASE("the flow-depth scan never sees fewer bracket levels than yaml-cpp parses (random YAML-like text)") {
  const std::vector<std::string> atoms = {"[", "]", "{", "}", ",", ":", ": ", " ", " ", "\n", "\n  ", "\n    ", "- ",
                                          "a", "b", "'", "\"", "#", " #", "|", ">", "&x ", "!t ", "*x", "?", "? ",
                                          "\\", "''", "key: ", "- a: ", "[a]: ", "&x [", "!t {"};
  std::mt19937 rng(21);
  int parsed = 0, under = 0;
  std::string first_under;
  for (int n = 0; n < 40000; ++n) {
    std::string text;
    for (int k = 1 + static_cast<int>(rng() % 25); k > 0; --k) text += atoms[rng() % atoms.size()];
    FlowDepth yaml(text);
    int documents = 0;
    try {
      std::istringstream in(text);
      YAML::Parser parser(in);
      // Capped: yaml-cpp 0.7 can report empty documents forever on a stray ',' (loader.cpp).
      while (parser.HandleNextDocument(yaml) && ++documents < 3) {
      }
    } catch (const YAML::Exception&) {
      continue;
    }
    if (documents != 1) continue;  // the loader refuses the others after counting documents
    ++parsed;
    if (scanned_depth(text) < yaml.deepest && ++under == 1) first_under = text;
  }
  CHECK(parsed > 5000);  // the mix yields parseable text often enough to mean something
  CHECK_MESSAGE(under == 0, under << " texts; the first:\n" << first_under);
}
