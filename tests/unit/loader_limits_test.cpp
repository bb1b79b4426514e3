// The loader's limits on hostile text (issue 21): many keys in one map load in linear time,
// flow nesting is bounded before yaml-cpp scans it, text that is not UTF-8 is refused with
// the encoding it is in, and a scenario without QPs is a warning. One behaviour per case.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include "scenario/flow_depth.h"
#include "scenario_fixture.h"
#include "util/utf8.h"

using qpo::diag::Severity;
using qpo::scenario::find_deep_flow;
using qpo::scenario::kMaxFlowDepth;
using qpo::test::line_of;
using qpo::test::load_only;
using qpo::test::load_validate;
using qpo::test::Loaded;

namespace {

std::string repeat(const std::string& s, size_t n) {
  std::string out;
  out.reserve(s.size() * n);
  for (size_t i = 0; i < n; ++i) out += s;
  return out;
}

// Loader and validator with no cap on the number of findings, so every one can be counted.
Loaded load_validate_all(std::string text) {
  Loaded l(std::move(text));
  l.sink.set_cap(SIZE_MAX);
  l.scenario = qpo::scenario::load_scenario(l.source, l.sink);
  if (l.scenario) qpo::validate::validate(*l.scenario, l.sink);
  return l;
}

const char* kPrelude = "version: 1\ndevices: { d: {} }\ncqs: { c: { device: d, depth: 64 } }\n";

}  // namespace

// --- many keys in one map (these took 20 s for 20,000 keys: each key searched the map again)

TEST_CASE("20,000 keys under one QP's states: are each a Q106 at its own key") {
  std::string y = std::string(kPrelude) + "qps:\n  q:\n    pd: d\n    type: UD\n    send_cq: c\n    recv_cq: c\n    states:\n";
  for (int i = 0; i < 20000; ++i) y += "      S" + std::to_string(i) + ": {}\n";
  auto l = load_validate_all(y);
  auto unknown = l.with_code("Q106");
  REQUIRE(unknown.size() == 20000);
  CHECK(l.errors() == 20000);
  CHECK(unknown.back()->message == "unknown QP state 'S19999'");
  CHECK(unknown.back()->path == "qps.q.states.S19999");
  CHECK(unknown.back()->loc.line == line_of(y, "S19999:"));
  CHECK(unknown.back()->loc.col == 7);
}

TEST_CASE("20,000 script args load in file order, each located at its key") {
  std::string y = std::string(kPrelude) +
                  "qps: { q: { pd: d, type: UD, send_cq: c, recv_cq: c } }\n"
                  "workloads:\n  w:\n    qp: q\n    script: w.lua\n    args:\n";
  for (int i = 0; i < 20000; ++i) y += "      k" + std::to_string(i) + ": " + std::to_string(i) + "\n";
  auto l = load_only(y);
  CHECK_MESSAGE(l.sink.all().empty(), l.dump());
  REQUIRE(l.scenario);
  REQUIRE(l.scenario->workloads.size() == 1);
  const auto& args = l.scenario->workloads[0].args;
  REQUIRE(args.size() == 20000);
  CHECK(args.back().key == "k19999");
  CHECK(args.back().value.integer == 19999);
  CHECK(args.back().loc.line == line_of(y, "k19999:"));
  CHECK(args.back().loc.col == 7);
}

// --- flow nesting

TEST_CASE("16 MiB of '[' is Q111 at the bracket that passes 64 levels, before yaml-cpp parses it") {
  auto l = load_only(std::string(16u << 20, '['));
  CHECK_FALSE(l.scenario);
  REQUIRE_MESSAGE(l.sink.all().size() == 1, l.dump());
  const auto* d = l.one("Q111");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->severity == Severity::Error);
  CHECK(d->message == "flow collections ([ ] and { }) nest deeper than 64 levels here");
  CHECK(d->loc.line == 1);
  CHECK(d->loc.col == kMaxFlowDepth + 1);
}

TEST_CASE("16 MiB of '{a: ' nesting is Q111 at the 65th '{'") {
  auto l = load_only("version: 1\nqps: " + repeat("{a: ", (16u << 20) / 4 - 8));
  const auto* d = l.one("Q111");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->loc.line == 2);
  CHECK(d->loc.col == 6 + 4 * kMaxFlowDepth);  // "qps: " then 64 times "{a: "
}

TEST_CASE("64 levels of flow nesting are allowed; 65 are not") {
  CHECK_FALSE(find_deep_flow("a: " + std::string(64, '[') + std::string(64, ']') + "\n"));
  auto deep = find_deep_flow("a: " + std::string(65, '[') + std::string(65, ']') + "\n");
  REQUIRE(deep);
  CHECK(deep->col == 3 + 65);
}

TEST_CASE("closed brackets do not add up: 1000 sibling lists are one level each") {
  CHECK_FALSE(find_deep_flow("a: [" + repeat("[1], ", 1000) + "]\n"));
}

TEST_CASE("brackets in quoted scalars, comments and block scalars do not count") {
  const std::string deep(100, '[');
  CHECK_FALSE(find_deep_flow("a: \"" + deep + "\"\n"));
  CHECK_FALSE(find_deep_flow("a: \"\\\"" + deep + "\"\n"));  // an escaped quote does not end it
  CHECK_FALSE(find_deep_flow("a: 'it''s " + deep + "'\n"));  // '' is a quote inside
  CHECK_FALSE(find_deep_flow("a: 1 # " + deep + "\n"));
  CHECK_FALSE(find_deep_flow("a: |\n  " + deep + "\n\n  " + deep + "\nb: 1\n"));
  CHECK_FALSE(find_deep_flow("- a: >-\n    " + deep + "\n  b: 1\n"));
  CHECK_FALSE(find_deep_flow("a: x" + deep + "\n"));  // inside a plain scalar, outside flow
}

TEST_CASE("a block scalar ends at its owner's indent: brackets after it count again") {
  auto deep = find_deep_flow("- a: |\n    text 'quote\n  b: " + std::string(65, '[') + "\n");
  REQUIRE(deep);
  CHECK(deep->line == 3);
  CHECK(deep->col == 5 + 65);
}

TEST_CASE("a quote inside a plain scalar does not hide the brackets after it") {
  auto deep = find_deep_flow("a: it's\nb: " + std::string(65, '[') + "\n");
  REQUIRE(deep);
  CHECK(deep->line == 2);
  CHECK(find_deep_flow("a: [x'y, " + std::string(65, '[') + "\n"));
}

// Each of these fooled a scan that opened a quote at any quote after a space: yaml-cpp reads
// the quote as text, then the brackets as 2 million levels (500 MB per 2 MiB).
TEST_CASE("a quote inside a plain scalar is text: brackets on the next line still count") {
  auto deep = find_deep_flow("version: 1\nname: a 'b\nqps: " + std::string(65, '[') + "'\n");
  REQUIRE(deep);
  CHECK(deep->line == 3);
  CHECK(deep->col == 5 + 65);
}

TEST_CASE("a quoted key after a dash item starts a quoted scalar: its '#' is not a comment") {
  CHECK(find_deep_flow("qps:\n- name: a\n  'x #' " + std::string(65, '[') + "\n"));
}

TEST_CASE("a JSON-like key's ':' is a value indicator: the quote after it opens a string") {
  CHECK(find_deep_flow("qps: {\"a\":\"b #\", " + std::string(65, '[') + "\n"));
}

TEST_CASE("brackets inside a plain scalar and its continuation lines are text") {
  const std::string deep(100, '[');
  CHECK_FALSE(find_deep_flow("a: x " + deep + "\n"));
  CHECK_FALSE(find_deep_flow("a: x\n  " + deep + "\nb: 1\n"));
  CHECK_FALSE(find_deep_flow("- a: x\n\n   " + deep + "\n- b\n"));
  auto ends = find_deep_flow("- a: x\n  b: " + std::string(65, '[') + "\n");  // not deeper than a: ends it
  REQUIRE(ends);
  CHECK(ends->line == 2);
}

// Shapes where yaml-cpp ends a scalar or a comment starts that an earlier scan missed
// (found by tests/unit/flow_depth_vs_yaml_test.cpp).
TEST_CASE("a block scalar's text is as deep as its first line; a shallower line ends it") {
  auto deep = find_deep_flow("a: >\n    text\n  " + std::string(65, '[') + "\n");
  REQUIRE(deep);
  CHECK(deep->line == 3);
  CHECK(find_deep_flow("|\n" + std::string(65, '[') + "\n"));  // a top-level one needs indented text
}

TEST_CASE("a plain value on its own line goes on at any indent past its key: a quote there is text") {
  // yaml-cpp reads "text 'x" as one scalar; a scan that ended it at the shallower line took
  // the quote as a string's start and skipped the brackets up to the closing quote.
  auto deep = find_deep_flow("version: 1\ndescription:\n    text\n  'x\nqps: " + std::string(65, '[') + "'\n");
  REQUIRE(deep);
  CHECK(deep->line == 5);
}

TEST_CASE("an empty key (': b') opens a map: the next unindented line is not the scalar's") {
  auto deep = find_deep_flow(": b\n" + std::string(65, '[') + "\n");
  REQUIRE(deep);
  CHECK(deep->line == 2);
}

TEST_CASE("a key opens its map at its own column even after an anchor on an earlier line") {
  auto deep = find_deep_flow("&x\nkey: a\n" + std::string(65, '[') + "\n");
  REQUIRE(deep);
  CHECK(deep->line == 3);
}

TEST_CASE("an empty key after a value (': : a') opens a map at its ':'") {
  auto deep = find_deep_flow(": : a\n  " + std::string(65, '[') + "\n");
  REQUIRE(deep);
  CHECK(deep->line == 2);
}

TEST_CASE("'#' right after a quoted scalar starts a comment, as yaml-cpp reads it") {
  CHECK_FALSE(find_deep_flow("a: [''#" + std::string(65, '[') + "\n]\n"));
}

TEST_CASE("a plain scalar followed by a million blank lines is scanned in one pass") {
  // Looking ahead past the blank lines at every one of them took ~10^12 steps (a hang) when
  // the scalar goes on after them.
  CHECK_FALSE(find_deep_flow("a: b\n" + std::string(1u << 20, '\n') + "  c " + std::string(100, '[') + "\n"));
  auto deep = find_deep_flow("a: b\n" + std::string(1u << 20, '\n') + "c: " + std::string(65, '[') + "\n");
  REQUIRE(deep);
  CHECK(deep->line == 2 + (1 << 20));
}

TEST_CASE("block nesting past yaml-cpp's recursion guard is Q111, not 'not valid YAML: bad file'") {
  auto l = load_only("version: 1\nqps:\n  " + repeat("- ", 100000) + "x\n");
  const auto* d = l.one("Q111");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message.rfind("the YAML nests deeper than the parser follows (", 0) == 0);
  CHECK(d->loc.line == 3);
  CHECK(l.with_code("Q100").empty());
}

// --- encodings

TEST_CASE("UTF-16 with a byte order mark is Q112 naming the encoding, at 1:1") {
  std::string text = "\xFF\xFE";
  for (char c : std::string("version: 1\nqps: {}\n")) text += std::string{c, '\0'};
  auto l = load_only(text);
  CHECK_FALSE(l.scenario);
  REQUIRE_MESSAGE(l.sink.all().size() == 1, l.dump());
  const auto* d = l.one("Q112");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "the file is not UTF-8 text: UTF-16 little-endian (byte order mark FF FE)");
  CHECK(d->hint == "save the file as UTF-8");
  CHECK(d->loc.line == 1);
  CHECK(d->loc.col == 1);
}

TEST_CASE("UTF-16 big-endian without a byte order mark is Q112 at its first NUL byte") {
  std::string text;
  for (char c : std::string("version: 1\n")) text += std::string{'\0', c};
  auto l = load_only(text);
  const auto* d = l.one("Q112");
  REQUIRE(d);
  CHECK(d->message == "the file is not UTF-8 text: UTF-16 big-endian (no byte order mark)");
  CHECK(d->loc.col == 1);
}

TEST_CASE("UTF-32 little-endian with a byte order mark is not taken for UTF-16") {
  std::string text("\xFF\xFE\0\0", 4);
  for (char c : std::string("version: 1\n")) text += std::string{c, '\0', '\0', '\0'};
  auto l = load_only(text);
  const auto* d = l.one("Q112");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "the file is not UTF-8 text: UTF-32 little-endian (byte order mark FF FE 00 00)");
}

TEST_CASE("a NUL byte inside UTF-8 text is Q112 at its line and column") {
  std::string text = std::string("version: 1\nname: a\nqps: {q") + '\0' + ": {}}\n";
  auto l = load_only(text);
  const auto* d = l.one("Q112");
  REQUIRE(d);
  CHECK(d->message == "the file is not UTF-8 text: a NUL byte (0x00), so not text");
  CHECK(d->loc.line == 3);
  CHECK(d->loc.col == 8);
}

TEST_CASE("invalid UTF-8 is Q112 at the first bad byte") {
  SUBCASE("an overlong '/'") {
    auto l = load_only("version: 1\nname: \xC0\xAF\n");
  const auto* d = l.one("Q112");
    REQUIRE(d);
    CHECK(d->message == "the file is not UTF-8 text: invalid UTF-8 (byte 0xC0 does not start a valid sequence)");
    CHECK(d->loc.line == 2);
    CHECK(d->loc.col == 7);
  }
  SUBCASE("Latin-1 text after valid UTF-8 on the same line") {
    auto l = load_only("version: 1\nname: caf\xC3\xA9 caf\xE9\n");
  const auto* d = l.one("Q112");
    REQUIRE(d);
    CHECK(d->message == "the file is not UTF-8 text: invalid UTF-8 (byte 0xE9 does not start a valid sequence)");
    CHECK(d->loc.col == 16);  // byte columns, as yaml-cpp counts them
  }
  SUBCASE("a UTF-16 surrogate encoded in UTF-8") {
    auto l = load_only("version: 1\n# \xED\xA0\x80\n");
  const auto* d = l.one("Q112");
    REQUIRE(d);
    CHECK(d->loc.line == 2);
    CHECK(d->loc.col == 3);
  }
}

TEST_CASE("a UTF-8 byte order mark is fine") {
  auto l = load_only("\xEF\xBB\xBF" + qpo::test::rc_pair());
  CHECK_MESSAGE(l.sink.all().empty(), l.dump());
  REQUIRE(l.scenario);
  CHECK(l.scenario->qps.size() == 2);
}

// --- nothing to do

TEST_CASE("a scenario without qps: is valid but warned: Q113") {
  auto l = load_validate("version: 1\n");
  CHECK(l.errors() == 0);
  REQUIRE_MESSAGE(l.sink.all().size() == 1, l.dump());
  const auto* d = l.one("Q113");
  REQUIRE(d);
  CHECK(d->severity == Severity::Warning);
  CHECK(d->message == "the scenario declares no QPs: there is nothing to do");
}

TEST_CASE("an empty qps: map is Q113 at the map") {
  auto l = load_only("version: 1\nqps: {}\n");
  const auto* d = l.one("Q113");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->loc.line == 2);
  CHECK(d->loc.col == 6);
}

TEST_CASE("qps: given a scalar is its own Q102, without Q113") {
  auto l = load_only("version: 1\nqps: 3\n");
  CHECK(l.one("Q102"));
  CHECK(l.with_code("Q113").empty());
}

TEST_CASE("find_encoding_problem accepts every valid UTF-8 length and rejects a truncated sequence") {
  CHECK_FALSE(qpo::util::find_encoding_problem("a \xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80\n"));
  auto p = qpo::util::find_encoding_problem("a \xE2\x82");
  REQUIRE(p);
  CHECK(p->col == 3);
}
