// Robustness: loader + validator never throw or crash, whatever the bytes, and anything they
// reject comes with at least one diagnostic carrying a code. Inputs are deterministic
// mutations (fixed seed) of every scenarios/*.yaml, plus hand-made junk.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "plan/plan.h"
#include "scenario_fixture.h"

namespace fs = std::filesystem;

namespace {

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<fs::path> example_scenarios() {
  std::vector<fs::path> out;
  fs::path dir = fs::path(QPO_SOURCE_DIR) / "scenarios";
  if (fs::is_directory(dir))
    for (const auto& e : fs::directory_iterator(dir))
      if (e.is_regular_file() && e.path().extension() == ".yaml") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> split_lines(const std::string& s) {
  std::vector<std::string> lines;
  std::string cur;
  for (char c : s) {
    if (c == '\n') {
      lines.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) lines.push_back(cur);
  return lines;
}

std::string join_lines(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

struct Case {
  std::string what;
  std::string text;
  bool known_invalid = false;
};

// Deterministic mutations of one file.
std::vector<Case> mutations(const std::string& name, const std::string& text, std::mt19937& rng) {
  std::vector<Case> out;
  auto lines = split_lines(text);
  const size_t n = lines.size();
  for (size_t i = 0; i < n; ++i) {
    auto del = lines;
    del.erase(del.begin() + static_cast<long>(i));
    out.push_back({name + ": delete line " + std::to_string(i + 1), join_lines(del)});
    auto dup = lines;
    dup.insert(dup.begin() + static_cast<long>(i), lines[i]);
    out.push_back({name + ": duplicate line " + std::to_string(i + 1), join_lines(dup)});
  }
  if (n > 1) {
    std::uniform_int_distribution<size_t> pick(0, n - 1);
    for (int k = 0; k < 60; ++k) {
      size_t a = pick(rng), b = pick(rng);
      auto sw = lines;
      std::swap(sw[a], sw[b]);
      out.push_back({name + ": swap lines " + std::to_string(a + 1) + " and " + std::to_string(b + 1), join_lines(sw)});
    }
  }
  if (!text.empty()) {
    std::uniform_int_distribution<size_t> pos(0, text.size() - 1);
    std::uniform_int_distribution<int> byte(0, 255);
    for (int k = 0; k < 200; ++k) {
      std::string t = text;
      size_t p = pos(rng);
      t[p] = static_cast<char>(byte(rng));
      out.push_back({name + ": flip byte " + std::to_string(p), t});
    }
    for (int k = 0; k < 40; ++k) {  // several bytes at once
      std::string t = text;
      for (int j = 0; j < 8; ++j) t[pos(rng)] = static_cast<char>(byte(rng));
      out.push_back({name + ": flip 8 bytes, round " + std::to_string(k), t});
    }
  }
  for (size_t cut = 0; cut < text.size(); cut += 97)
    out.push_back({name + ": truncate at byte " + std::to_string(cut), text.substr(0, cut)});

  const std::vector<std::string> junk = {"[[[[", "{", "}", "]", "\t", ":", "&a *a", "*nope", "- ", "? ", "|", ">",
                                         "!!binary", "!<tag:x>", "'", "\"", "#", "---", "...", "%YAML 1.1",
                                         "999999999999999999999999", "-1", "0x", "1e9999", "~", "null", "<<: *a",
                                         std::string("\0", 1), "\xff\xfe", "\xc3\x28"};
  if (!text.empty()) {
    std::uniform_int_distribution<size_t> pos(0, text.size());
    for (const auto& j : junk)
      for (int k = 0; k < 12; ++k) {
        std::string t = text;
        size_t p = pos(rng);
        t.insert(p, j);
        out.push_back({name + ": insert '" + j + "' at byte " + std::to_string(p), t});
      }
  }
  // Every number in the file replaced by a 24-digit one.
  {
    std::string t;
    for (size_t i = 0; i < text.size(); ++i) {
      if (std::isdigit(static_cast<unsigned char>(text[i]))) {
        while (i + 1 < text.size() && std::isdigit(static_cast<unsigned char>(text[i + 1]))) ++i;
        t += "999999999999999999999999";
      } else {
        t += text[i];
      }
    }
    out.push_back({name + ": every number 999999999999999999999999", t});
  }
  // Each line's value replaced by a deep structure.
  for (size_t i = 0; i < n; ++i) {
    auto colon = lines[i].find(": ");
    if (colon == std::string::npos) continue;
    auto deep = lines;
    deep[i] = lines[i].substr(0, colon + 2) + std::string(200, '[') + std::string(200, ']');
    out.push_back({name + ": line " + std::to_string(i + 1) + " value nested 200 deep", join_lines(deep)});
  }
  return out;
}

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

struct Outcome {
  bool threw = false;
  std::string exception;
  bool loaded = false;
  size_t errors = 0, diags = 0;
  bool all_coded = true;
  bool locs_in_range = true;
  bool plan_threw = false;
};

Outcome run(const std::string& text) {
  Outcome o;
  try {
    auto l = qpo::test::load_validate(text);
    o.loaded = l.scenario.has_value();
    o.errors = l.sink.error_count();
    o.diags = l.sink.all().size();
    for (const auto& d : l.sink.all()) {
      if (d.code.empty() || d.code.size() != 4 || d.code[0] != 'Q') o.all_coded = false;
      if (d.loc.line < 0 || d.loc.line > l.source.line_count() + 1 || d.loc.col < 0) o.locs_in_range = false;
    }
    if (o.loaded && o.errors == 0) {
      try {
        auto p = qpo::plan::build_plan(*l.checked);
        (void)qpo::plan::render_text(p);
      } catch (...) {
        o.plan_threw = true;
      }
    }
  } catch (const std::exception& e) {
    o.threw = true;
    o.exception = e.what();
  } catch (...) {
    o.threw = true;
    o.exception = "non-std exception";
  }
  return o;
}

// Runs every case; reports the first few failures of each kind with the mutation that caused them.
void check_cases(const std::vector<Case>& cases) {
  size_t threw = 0, uncoded = 0, silent = 0, bad_loc = 0, plan_threw = 0, invalid_silent = 0;
  for (const auto& c : cases) {
    Outcome o = run(c.text);
    if (o.threw && threw++ < 5) FAIL_CHECK("load/validate threw on [" << c.what << "]: " << o.exception);
    if (o.threw) continue;
    if (!o.all_coded && uncoded++ < 5) FAIL_CHECK("a diagnostic without a Qnnn code on [" << c.what << "]");
    if (!o.loaded && o.errors == 0 && silent++ < 5) FAIL_CHECK("rejected without an error diagnostic: [" << c.what << "]");
    if (c.known_invalid && o.errors == 0 && invalid_silent++ < 5)
      FAIL_CHECK("invalid input accepted without an error: [" << c.what << "]");
    if (!o.locs_in_range && bad_loc++ < 5) FAIL_CHECK("a diagnostic points outside the file on [" << c.what << "]");
    if (o.plan_threw && plan_threw++ < 5) FAIL_CHECK("build_plan threw on a valid input [" << c.what << "]");
  }
  CHECK(threw == 0);
  CHECK(uncoded == 0);
  CHECK(silent == 0);
  CHECK(invalid_silent == 0);
  CHECK(bad_loc == 0);
  CHECK(plan_threw == 0);
}

}  // namespace

TEST_CASE("there are example scenarios to mutate") { CHECK_FALSE(example_scenarios().empty()); }

TEST_CASE("mutated example scenarios never make load + validate throw, and rejections carry a code") {
  std::mt19937 rng(20240601);
  std::vector<Case> cases;
  for (const auto& p : example_scenarios()) {
    auto m = mutations(p.filename().string(), read_file(p), rng);
    cases.insert(cases.end(), m.begin(), m.end());
  }
  // Under ASan each case costs ~10x (a Lua sandbox per script workload): the sanitizer suite
  // takes every 4th mutation, so its CI time stays flat as examples are added; libFuzzer
  // (sanitize_fuzz) explores the same code under ASan at random.
  if (kSanitized) {
    std::vector<Case> every4th;
    for (size_t i = 0; i < cases.size(); i += 4) every4th.push_back(std::move(cases[i]));
    cases = std::move(every4th);
  }
  MESSAGE(cases.size() << " mutated inputs" << (kSanitized ? " (every 4th: sanitizer build)" : ""));
  check_cases(cases);
}

TEST_CASE("the empty string and whitespace are rejected with a diagnostic, not an exception") {
  check_cases({{"empty string", "", true},
               {"one newline", "\n", true},
               {"spaces", "   \n\t\n", true},
               {"a comment", "# nothing\n", true},
               {"document markers", "---\n...\n", true}});
}

TEST_CASE("binary junk is rejected with a diagnostic, not an exception") {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_int_distribution<size_t> len(1, 4096);
  std::vector<Case> cases;
  for (int k = 0; k < 100; ++k) {
    std::string t(len(rng), '\0');
    for (auto& c : t) c = static_cast<char>(byte(rng));
    cases.push_back({"binary junk #" + std::to_string(k), t, true});
  }
  cases.push_back({"NUL bytes", std::string(64, '\0'), true});
  cases.push_back({"UTF-16 BOM and text", std::string("\xff\xfev\0e\0r\0", 8), true});
  check_cases(cases);
}

TEST_CASE("hand-made junk documents are rejected with a diagnostic, not an exception") {
  check_cases({
      {"[[[[", "[[[[", true},
      {"{", "{", true},
      {"colon", ":", true},
      {"tab", "\t", true},
      {"self alias", "&a *a", true},
      {"recursive alias", "a: &a [*a]\nversion: 1\n", true},
      {"undefined alias", "version: *nope\n", true},
      {"merge key", "base: &b { version: 1 }\n<<: *b\n", true},
      {"huge version", "version: 999999999999999999999999\n", true},
      {"version is a list", "version: [1]\n", true},
      {"qps is a scalar", "version: 1\nqps: 5\n", true},
      {"a QP is a scalar", "version: 1\nqps:\n  q: 5\n", true},
      {"a QP is a list", "version: 1\nqps:\n  q: [pd, d]\n", true},
      {"states is a list", "version: 1\nqps:\n  q: { pd: d, type: RC, states: [INIT] }\n", true},
      {"a state body is a scalar", "version: 1\nqps:\n  q: { pd: d, type: RC, states: { INIT: 5 } }\n", true},
      {"transitions is a map", "version: 1\nqps:\n  q: { pd: d, type: RC, transitions: { to: ERR } }\n", true},
      {"a transition item is a list", "version: 1\nqps:\n  q: { pd: d, type: RC, transitions: [[ERR]] }\n", true},
      {"ah_attr is a list", "version: 1\nqps:\n  q: { pd: d, type: RC, states: { INIT: {}, RTR: { ah_attr: [1] } } }\n",
       true},
      {"grh is a scalar",
       "version: 1\nqps:\n  q: { pd: d, type: RC, states: { INIT: {}, RTR: { ah_attr: { grh: 5 } } } }\n", true},
      {"cap is a scalar", "version: 1\nqps:\n  q: { pd: d, type: RC, cap: 5 }\n", true},
      {"a map as a key", "version: 1\n{a: 1}: 2\n", true},
      {"a list as a key", "version: 1\n[a]: 2\n", true},
      {"an expect map with junk", "version: 1\nqps:\n  q: { pd: d, type: RC, states: { INIT: { expect: { x: 1 } } } }\n",
       true},
      {"workload expect is a list", "version: 1\nworkloads:\n  w: { qp: q, op: send, expect: [1] }\n", true},
      {"hosts is a list", "version: 1\nhosts: [a, b]\n", true},
      {"requires is a map", "version: 1\nrequires: { a: 1 }\n", true},
      {"name with junk", "version: 1\nqps:\n  \"q\\u0000x\": { pd: d, type: RC }\n", true},
      {"a 100 kB name", "version: 1\nqps:\n  " + std::string(100000, 'q') + ": { pd: d, type: RC }\n", true},
      {"a 100 kB value", "version: 1\nname: " + std::string(100000, 'n') + "\nqps: 5\n", true},
  });
}

TEST_CASE("very long numbers anywhere are range or type errors, not exceptions") {
  std::string big = "999999999999999999999999";
  auto y = qpo::test::rc_pair("{ path_mtu: " + big + ", min_rnr_timer: " + big + ", max_dest_rd_atomic: " + big + " }",
                              "{ path_mtu: auto, rq_psn: " + big + " }");
  y.replace(y.find("depth: 512"), 10, "depth: " + big);
  y.replace(y.find("size: 64KiB"), 11, "size: " + big + "KiB");
  check_cases({{"24-digit numbers", y, true}, {"2^64", qpo::test::rc_pair("{ min_rnr_timer: 18446744073709551616 }"), true},
               {"2^64-1 KiB", qpo::test::rc_pair() + "mrs: { mx: { pd: pa, size: 18446744073709551615KiB } }\n", true}});
}

TEST_CASE("5000 levels of nesting are rejected or reported, not a stack overflow") {
  std::string flow = std::string(5000, '[') + std::string(5000, ']');
  std::string flow_map;
  for (int i = 0; i < 5000; ++i) flow_map += "{a: ";
  flow_map += "1";
  flow_map += std::string(5000, '}');
  std::string block;
  for (int i = 0; i < 5000; ++i) block += std::string(static_cast<size_t>(i), ' ') + "k" + std::to_string(i) + ":\n";
  std::string seq;
  for (int i = 0; i < 5000; ++i) seq += std::string(static_cast<size_t>(i) * 2, ' ') + "-\n";
  check_cases({{"5000 nested flow lists", flow, true},
               {"5000 nested flow maps", flow_map, true},
               {"5000 nested block maps", block, true},
               {"5000 nested block lists", seq, true},
               {"version: + 5000 nested lists", "version: 1\nname: " + flow + "\n", true},
               {"a QP attribute nested 5000 deep", qpo::test::rc_pair("{ ah_attr: " + flow + " }"), true}});
}

TEST_CASE("a generated 100,000-QP scenario loads and validates without crashing") {
  // Under ASan 10,000 QPs take the same paths; the full scale is the plain build's (sanitize_tests
  // spent ~1 min here).
  const int pairs = kSanitized ? 5000 : 50000;
  std::string y =
      "version: 1\nname: big\ndevices: { d: {} }\ncqs: { c: { device: d, depth: 100000000 } }\nqps:\n";
  y.reserve(static_cast<size_t>(pairs) * 2 * 260);
  for (int i = 0; i < pairs; ++i) {
    for (int side = 0; side < 2; ++side) {
      std::string me = "q" + std::to_string(i) + (side ? "b" : "a");
      std::string peer = "q" + std::to_string(i) + (side ? "a" : "b");
      y += "  " + me + ": { pd: d, type: RC, send_cq: c, recv_cq: c, connect: " + peer +
           ", states: { INIT: { qp_access_flags: [remote_write] }, RTR: { path_mtu: auto }, RTS: {} } }\n";
    }
  }
  Outcome o = run(y);
  CHECK_MESSAGE(!o.threw, o.exception);
  CHECK(o.loaded);
  CHECK(o.errors == 0);
}
