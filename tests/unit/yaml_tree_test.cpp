// The scenario's YAML tree (scenario/yaml_tree.h): what the loader reads from it, and what it
// costs (issue 30 item 10: yaml-cpp's nodes took 318 MB for 10,000 hand-written QPs).
#include <doctest/doctest.h>

#include <string>

#include "scenario/yaml_parse.h"
#include "scenario/yaml_tree.h"

using qpo::scenario::parse_value;
using qpo::scenario::parse_yaml;
using qpo::yaml::Node;

TEST_CASE("a map's entries come in file order, with their lines and columns") {
  auto p = parse_yaml("b: 1\na: [x, y]\n");
  REQUIRE(p.root.IsMap());
  CHECK(p.root.size() == 2);
  std::string keys;
  for (const auto& kv : p.root) keys += kv.first.Scalar();
  CHECK(keys == "ba");
  Node list = p.root["a"];
  REQUIRE(list.IsSequence());
  CHECK(list[1].Scalar() == "y");
  CHECK(list.Mark().line == 1);
  CHECK(list[1].Mark().column == 7);
}

TEST_CASE("a missing key or index is undefined; an empty value is null") {
  auto p = parse_yaml("a: [1]\nb:\n");
  CHECK(!p.root["zz"]);
  CHECK(!p.root["a"][5]);
  CHECK(!p.root["a"]["x"]);  // a list has no keys
  CHECK(p.root["b"].IsDefined());
  CHECK(p.root["b"].IsNull());
  CHECK(p.root["zz"].Scalar().empty());
}

TEST_CASE("an alias is its anchor's node") {
  auto p = parse_yaml("a: &x { k: v }\nb: *x\n");
  CHECK(p.root["a"].identity() == p.root["b"].identity());
  CHECK(p.root["b"]["k"].Scalar() == "v");
}

TEST_CASE("quoted and plain scalars keep their tags; null spellings are null only when plain") {
  auto p = parse_yaml("a: '40'\nb: 40\nc: ~\nd: '~'\ne: !!str 7\n");
  CHECK(p.root["a"].Tag() == "!");
  CHECK(p.root["b"].Tag() == "?");
  CHECK(p.root["c"].IsNull());
  CHECK(p.root["d"].Scalar() == "~");
  CHECK(p.root["e"].Tag() == "tag:yaml.org,2002:str");
}

TEST_CASE("appending to a map keeps every entry as it grows past its parsed size") {
  auto p = parse_yaml("m: { a: 0 }\n");
  Node m = p.root["m"];
  for (int i = 1; i <= 40; ++i) m.append_entry(p.tree->new_scalar("k" + std::to_string(i), "?"),
                                               parse_value(*p.tree, std::to_string(i)));
  REQUIRE(m.size() == 41);
  CHECK(m["a"].Scalar() == "0");
  CHECK(m["k1"].Scalar() == "1");
  CHECK(m["k40"].Scalar() == "40");
}

TEST_CASE("a --set value parsed into the tree can replace an entry and a list item") {
  auto p = parse_yaml("m: { a: 0 }\nl: [1, 2]\n");
  Node m = p.root["m"];
  m.set_map_value(0, parse_value(*p.tree, "[x, y]"));
  CHECK(m["a"][1].Scalar() == "y");
  Node l = p.root["l"];
  l.set_item(1, parse_value(*p.tree, "{ z: 3 }"));
  CHECK(l[1]["z"].Scalar() == "3");
}

TEST_CASE("a syntax error carries libyaml's words and position") {
  try {
    parse_yaml("a: [1, 2\nb: 3\n");
    FAIL("no error");
  } catch (const qpo::yaml::ParseError& e) {
    CHECK(e.mark.line >= 1);
    CHECK(e.msg.find("did not find expected") != std::string::npos);
  }
}

// What made item 10 slow was memory: yaml-cpp's ~800 bytes per node. The tree's arena is
// counted, so its size per node is asserted exactly, not timed.
TEST_CASE("10,000 hand-written QPs parse into an arena of under 64 bytes per node") {
  std::string text = "qps:\n";
  for (int i = 0; i < 10000; ++i)
    text += "  q" + std::to_string(i) + ":\n    pd: pa\n    type: RC\n    cap: { max_send_wr: 128, max_recv_wr: 128 }\n"
            "    states:\n      INIT: { pkey_index: 0, port_num: 1, qp_access_flags: [remote_write, remote_read] }\n";
  auto p = parse_yaml(text);
  REQUIRE(p.root["qps"].size() == 10000);
  // Per QP: its key and map (2), pd/type (4), cap with 2 entries (2 + 4), states (2), INIT's map
  // with 3 entries (1 + 1 + 6), the access list (1 + 2): 25 nodes.
  size_t nodes = 10000 * 25;
  CHECK(p.tree->bytes() < nodes * 64);
}
