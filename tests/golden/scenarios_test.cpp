// Whole-file checks: every example scenario is valid; every tests/scenarios/bad/*.yaml produces
// exactly the diagnostics its header promises ("# expect: Q302 line 17", one line per expected
// diagnostic); and schemas/scenario.schema.json lists the same keys as the loader.
#include <doctest/doctest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "unit/scenario_fixture.h"
#include "scenario/keys.h"
#include "spec/rules.h"
#include "util/async_event_names.h"
#include "util/ops.h"
#include "util/packet_event_names.h"
#include "util/wire_facts.h"
#include "util/strings.h"

namespace fs = std::filesystem;

namespace {

const fs::path kRoot = QPO_SOURCE_DIR;

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<fs::path> yaml_files(const fs::path& dir) {
  std::vector<fs::path> out;
  if (fs::is_directory(dir))
    for (const auto& e : fs::directory_iterator(dir))
      if (e.is_regular_file() && (e.path().extension() == ".yaml" || e.path().extension() == ".yml"))
        out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

qpo::test::Loaded load_file(const fs::path& p) {
  qpo::test::Loaded l(read_file(p), p.filename().string());
  l.scenario = qpo::scenario::load_scenario(l.source, l.sink);
  if (l.scenario) l.checked = qpo::validate::validate(*l.scenario, l.sink);
  l.sink.sort();
  return l;
}

using CodeLine = std::pair<std::string, int>;

std::string show(const std::set<CodeLine>& s) {
  std::string out;
  for (const auto& [c, l] : s) out += (out.empty() ? "" : ", ") + c + " line " + std::to_string(l);
  return out.empty() ? "(none)" : out;
}

// Parses "# expect: Q302 line 17"; nullopt when the line is not exactly that shape.
std::optional<CodeLine> parse_expect(std::string_view line) {
  auto eat = [&](std::string_view word) {
    line = qpo::util::trim(line);
    if (line.substr(0, word.size()) != word) return false;
    line.remove_prefix(word.size());
    return true;
  };
  if (!eat("#") || !eat("expect:")) return std::nullopt;
  line = qpo::util::trim(line);
  if (line.size() < 4 || line[0] != 'Q') return std::nullopt;
  std::string code(line.substr(0, 4));
  for (size_t i = 1; i < 4; ++i)
    if (!std::isdigit(static_cast<unsigned char>(code[i]))) return std::nullopt;
  line.remove_prefix(4);
  if (line.empty() || !std::isspace(static_cast<unsigned char>(line[0])) || !eat("line")) return std::nullopt;
  line = qpo::util::trim(line);
  if (line.empty() || line.size() > 6) return std::nullopt;
  for (char c : line)
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
  return CodeLine{code, std::stoi(std::string(line))};
}

// Every "# expect: Qnnn line N" line of the file; lines that start like one but do not parse
// go to `malformed`.
std::set<CodeLine> expectations(const std::string& text, std::vector<std::string>* malformed) {
  std::set<CodeLine> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (auto e = parse_expect(line)) {
      out.insert(*e);
      continue;
    }
    std::string_view t = qpo::util::trim(line);
    if (malformed && !t.empty() && t[0] == '#' && qpo::util::trim(t.substr(1)).substr(0, 7) == "expect:")
      malformed->push_back(line);
  }
  return out;
}

// Property names of a JSON-schema object node.
std::set<std::string> property_names(const YAML::Node& def) {
  std::set<std::string> out;
  if (!def || !def.IsMap()) return out;
  YAML::Node props = def["properties"];
  if (props && props.IsMap())
    for (const auto& kv : props) out.insert(kv.first.as<std::string>());
  return out;
}

std::set<std::string> as_set(const std::vector<std::string>& v) { return {v.begin(), v.end()}; }

std::string show(const std::set<std::string>& s) {
  return qpo::util::join(std::vector<std::string>(s.begin(), s.end()), ", ");
}

std::set<std::string> minus(const std::set<std::string>& a, const std::set<std::string>& b) {
  std::set<std::string> out;
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::inserter(out, out.end()));
  return out;
}

YAML::Node load_schema() {
  fs::path p = kRoot / "schemas" / "scenario.schema.json";
  REQUIRE_MESSAGE(fs::exists(p), p.string() << " does not exist");
  return YAML::LoadFile(p.string());
}

// definitions (draft-07) or $defs (2019-09+).
YAML::Node definition(const YAML::Node& schema, const std::string& name) {
  for (const char* section : {"definitions", "$defs"})
    if (schema[section] && schema[section][name]) return schema[section][name];
  return YAML::Node();
}

// The JSON type of a YAML value as an editor's schema check sees it (YAML 1.2 core schema):
// a quoted scalar is a string, a plain one a boolean, null, integer or number when it reads as one.
std::string json_type(const YAML::Node& v) {
  if (v.IsMap()) return "object";
  if (v.IsSequence()) return "array";
  if (v.IsNull()) return "null";
  if (v.Tag() == "!") return "string";
  static const std::regex boolean("true|True|TRUE|false|False|FALSE"), null("null|Null|NULL|~");
  static const std::regex integer("[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+");
  static const std::regex number("[-+]?(\\.[0-9]+|[0-9]+(\\.[0-9]*)?)([eE][-+]?[0-9]+)?");
  const std::string& s = v.Scalar();
  if (std::regex_match(s, boolean)) return "boolean";
  if (s.empty() || std::regex_match(s, null)) return "null";
  if (std::regex_match(s, integer)) return "integer";
  if (std::regex_match(s, number)) return "number";
  return "string";
}

// The JSON Schema keywords scenario.schema.json uses, checked on a YAML value: "" when `v`
// satisfies `schema`, else why not (the first reason found).
std::string schema_violation(const YAML::Node& root, const YAML::Node& schema, const YAML::Node& v) {
  if (schema["$ref"]) {
    std::string ref = schema["$ref"].as<std::string>();
    return schema_violation(root, definition(root, ref.substr(ref.rfind('/') + 1)), v);
  }
  std::string type = json_type(v);
  if (const auto t = schema["type"]) {
    bool ok = false;
    for (const auto& want : t.IsSequence() ? t : YAML::Node(std::vector<YAML::Node>{t})) {
      std::string w = want.as<std::string>();
      ok |= w == type || (w == "number" && type == "integer");
    }
    if (!ok) return "a " + type + " where the schema wants " + YAML::Dump(t);
  }
  if (const auto e = schema["enum"]) {
    bool ok = false;
    for (const auto& x : e) ok |= v.IsScalar() && x.Scalar() == v.Scalar();
    if (!ok) return "'" + (v.IsScalar() ? v.Scalar() : YAML::Dump(v)) + "' is not in the enum";
  }
  if (const auto p = schema["pattern"]; p && type == "string" && !std::regex_search(v.Scalar(), std::regex(p.as<std::string>())))
    return "'" + v.Scalar() + "' does not match " + p.as<std::string>();
  if (const auto alts = schema["oneOf"]) {
    int matched = 0;
    std::string whys;
    for (const auto& alt : alts) {
      std::string why = schema_violation(root, alt, v);
      matched += why.empty();
      whys += "\n  - " + why;
    }
    if (matched != 1) return "matches " + std::to_string(matched) + " of oneOf's alternatives:" + whys;
  }
  if (const auto alts = schema["anyOf"]) {
    bool any = false;
    for (const auto& alt : alts) any |= schema_violation(root, alt, v).empty();
    if (!any) return "matches none of anyOf's alternatives";
  }
  if (type == "object") {
    for (const auto& r : schema["required"])
      if (!v[r.as<std::string>()]) return "lacks required '" + r.as<std::string>() + "'";
    for (const auto& kv : v) {
      std::string key = kv.first.as<std::string>();
      YAML::Node sub = schema["properties"] ? schema["properties"][key] : YAML::Node();
      if (!sub) {
        const auto extra = schema["additionalProperties"];
        if (extra && extra.IsScalar() && extra.as<std::string>() == "false") return "'" + key + "' is not a property it allows";
        if (!extra || extra.IsScalar()) continue;
        sub = extra;
      }
      if (auto why = schema_violation(root, sub, kv.second); !why.empty()) return key + ": " + why;
    }
  }
  if (type == "array" && schema["items"])
    for (const auto& item : v)
      if (auto why = schema_violation(root, schema["items"], item); !why.empty()) return "an item: " + why;
  if (type == "integer" || type == "number") {
    double x = v.as<double>();
    if (schema["minimum"] && x < schema["minimum"].as<double>()) return v.Scalar() + " is below the minimum";
    if (schema["maximum"] && x > schema["maximum"].as<double>()) return v.Scalar() + " is above the maximum";
  }
  return "";
}

// The `timeline:` lists of the README's yaml examples, each as its own YAML text.
std::vector<std::string> readme_timelines() {
  std::string readme = read_file(kRoot / "README.md");
  std::vector<std::string> out;
  static const std::regex block("```yaml\n([\\s\\S]*?)\n *```"), key("^( *)timeline: *(#.*)?$");
  for (std::sregex_iterator b(readme.begin(), readme.end(), block), end; b != end; ++b) {
    std::istringstream lines((*b)[1].str());
    std::string line, list;
    size_t indent = std::string::npos;
    while (std::getline(lines, line)) {
      std::smatch m;
      if (indent == std::string::npos) {
        if (std::regex_match(line, m, key)) indent = m[1].length();
        continue;
      }
      size_t at = line.find_first_not_of(' ');
      if (at == std::string::npos) continue;
      if (at < indent || (at == indent && line.compare(at, 2, "- ") != 0)) break;
      list += line.substr(indent) + "\n";
    }
    if (!list.empty()) out.push_back(list);
  }
  return out;
}

}  // namespace

TEST_CASE("every timeline step the README shows is valid against the scenario schema") {
  YAML::Node schema = load_schema();
  YAML::Node step = definition(schema, "timeline_step");
  REQUIRE(step);
  size_t steps = 0;
  for (const auto& list : readme_timelines()) {
    YAML::Node items = YAML::Load(list);
    REQUIRE_MESSAGE(items.IsSequence(), list);
    for (const auto& item : items) {
      CAPTURE(YAML::Dump(item));
      CHECK_MESSAGE(schema_violation(schema, step, item) == "", schema_violation(schema, step, item));
      ++steps;
    }
  }
  CHECK(steps >= 24);  // the README's four timeline examples
}

TEST_CASE("the schema check refuses a timeline step the loader refuses") {
  YAML::Node schema = load_schema();
  YAML::Node step = definition(schema, "timeline_step");
  CHECK(schema_violation(schema, step, YAML::Load("{ qps: 'srv[0:2]', to: ERR }")) == "");
  CHECK(schema_violation(schema, step, YAML::Load("{ qps: 'srv[0:2]', to: DONE }")) != "");
  CHECK(schema_violation(schema, step, YAML::Load("{ qps: [a], to: ERR, colour: red }")) != "");
  CHECK(schema_violation(schema, step, YAML::Load("{ pause: 1ms, barrier: x }")) != "");
}

TEST_CASE("every scenarios/*.yaml validates with zero errors") {
  auto files = yaml_files(kRoot / "scenarios");
  REQUIRE_MESSAGE(!files.empty(), "no scenarios/*.yaml");
  for (const auto& f : files) {
    CAPTURE(f.filename().string());
    auto l = load_file(f);
    CHECK_MESSAGE(l.scenario.has_value(), l.dump());
    CHECK_MESSAGE(l.errors() == 0, l.dump());
  }
}

TEST_CASE("every scenarios/interop/*.yaml and tests/scenarios/interop/*.yaml validates with zero errors") {
  auto files = yaml_files(kRoot / "scenarios" / "interop");
  REQUIRE_MESSAGE(!files.empty(), "no scenarios/interop/*.yaml");
  auto tests = yaml_files(kRoot / "tests" / "scenarios" / "interop");
  REQUIRE_MESSAGE(!tests.empty(), "no tests/scenarios/interop/*.yaml");
  files.insert(files.end(), tests.begin(), tests.end());
  for (const auto& f : files) {
    CAPTURE(f.filename().string());
    auto l = load_file(f);
    CHECK_MESSAGE(l.scenario.has_value(), l.dump());
    CHECK_MESSAGE(l.errors() == 0, l.dump());
  }
}

TEST_CASE("every scenarios/wire/*.yaml and tests/scenarios/wire/*.yaml validates with zero errors and zero warnings") {
  auto files = yaml_files(kRoot / "scenarios" / "wire");
  REQUIRE_MESSAGE(!files.empty(), "no scenarios/wire/*.yaml");
  auto tests = yaml_files(kRoot / "tests" / "scenarios" / "wire");
  files.insert(files.end(), tests.begin(), tests.end());
  for (const auto& f : files) {
    CAPTURE(f.filename().string());
    auto l = load_file(f);
    CHECK_MESSAGE(l.scenario.has_value(), l.dump());
    CHECK_MESSAGE(l.sink.all().empty(), l.dump());
  }
}

TEST_CASE("tests/scenarios/bad/ holds bad scenarios, each with '# expect: Qnnn line N' headers") {
  auto files = yaml_files(kRoot / "tests" / "scenarios" / "bad");
  REQUIRE_MESSAGE(!files.empty(), "tests/scenarios/bad/ has no *.yaml files");
  for (const auto& f : files) {
    CAPTURE(f.filename().string());
    std::vector<std::string> malformed;
    auto want = expectations(read_file(f), &malformed);
    CHECK_MESSAGE(!want.empty(), "no '# expect: Qnnn line N' header");
    CHECK_MESSAGE(malformed.empty(), "unreadable expect line: " << (malformed.empty() ? "" : malformed[0]));
  }
}

TEST_CASE("every bad scenario produces each expected (code, line), and every error it produces is expected") {
  auto files = yaml_files(kRoot / "tests" / "scenarios" / "bad");
  REQUIRE_MESSAGE(!files.empty(), "tests/scenarios/bad/ has no *.yaml files");
  for (const auto& f : files) {
    CAPTURE(f.filename().string());
    auto want = expectations(read_file(f), nullptr);
    auto l = load_file(f);
    std::set<CodeLine> got_any, got_errors;
    for (const auto& d : l.sink.all()) {
      got_any.insert({d.code, d.loc.line});
      if (d.severity == qpo::diag::Severity::Error) got_errors.insert({d.code, d.loc.line});
    }
    std::set<CodeLine> missing, unexpected;
    for (const auto& w : want)
      if (!got_any.count(w)) missing.insert(w);
    for (const auto& g : got_errors)
      if (!want.count(g)) unexpected.insert(g);
    CHECK_MESSAGE(missing.empty(), "expected but not produced: " << show(missing) << "\nproduced:\n" << l.dump());
    CHECK_MESSAGE(unexpected.empty(), "errors produced but not expected: " << show(unexpected) << "\nproduced:\n"
                                                                           << l.dump());
  }
}

TEST_CASE("the scenario schema's object properties match the loader's keys") {
  YAML::Node schema = load_schema();
  namespace keys = qpo::scenario::keys;
  const std::pair<const char*, const std::vector<std::string>&> objects[] = {
      {"host", keys::host()}, {"device", keys::device()}, {"pd", keys::pd()},   {"mr", keys::mr()},
      {"cq", keys::cq()},     {"srq", keys::srq()},       {"xrcd", keys::xrcd()}, {"qp", keys::qp()},
      {"cap", keys::cap()},   {"workload", keys::workload()}, {"thresholds", keys::threshold()},
      {"mw", keys::mw()}, {"mcast_group", keys::mcast_group()}, {"fault", keys::fault()},
      {"external", keys::external()}, {"packet_event", keys::packet_event()}};
  for (const auto& entry : objects) {
    // Not a structured binding: clang 14 cannot capture one in CAPTURE's lambda.
    const char* name = entry.first;
    const std::vector<std::string>& loader_keys = entry.second;
    CAPTURE(name);
    YAML::Node def = definition(schema, name);
    REQUIRE_MESSAGE(def, "schema has no definition '" << name << "'");
    auto in_schema = property_names(def);
    auto in_loader = as_set(loader_keys);
    CHECK_MESSAGE(minus(in_loader, in_schema).empty(), "loader accepts, schema lacks: " << show(minus(in_loader, in_schema)));
    CHECK_MESSAGE(minus(in_schema, in_loader).empty(), "schema lists, loader rejects: " << show(minus(in_schema, in_loader)));
  }
}

// An editor that follows the schema must take what the loader takes: the scenario's op names
// and the verbs' own (IBV_WR_ATOMIC_CMP_AND_SWP was missing), and nothing the loader refuses.
TEST_CASE("the schema's workload op enum is the op table's scenario and verbs names, each a workload op") {
  YAML::Node schema = load_schema();
  YAML::Node op = definition(schema, "workload")["properties"]["op"];
  REQUIRE(op["enum"].IsSequence());
  std::set<std::string> in_schema;
  for (const auto& v : op["enum"]) {
    std::string name = v.as<std::string>();
    in_schema.insert(name);
    auto parsed = qpo::util::parse_op(name);
    // recv is a workload op only as a scenario spelling ("recv": a receive-only workload).
    CHECK_MESSAGE((parsed && (*parsed != qpo::util::Op::Recv || name == "recv")), name << " is not a workload op");
  }
  std::set<std::string> want = as_set(qpo::util::scenario_op_names());
  for (const auto& n : qpo::util::verbs_op_names()) want.insert(n);
  CHECK_MESSAGE(minus(want, in_schema).empty(), "loader takes, schema lacks: " << show(minus(want, in_schema)));
  CHECK(op["enumDescriptions"].size() == op["enum"].size());
  CHECK(op["markdownEnumDescriptions"].size() == op["enum"].size());
}

TEST_CASE("the schema's wire section lists the loader's wire keys") {
  YAML::Node wire = load_schema()["properties"]["wire"];
  REQUIRE(wire);
  auto in_schema = property_names(wire);
  auto in_loader = as_set(qpo::scenario::keys::wire());
  CHECK_MESSAGE(minus(in_loader, in_schema).empty(), "loader accepts, schema lacks: " << show(minus(in_loader, in_schema)));
  CHECK_MESSAGE(minus(in_schema, in_loader).empty(), "schema lists, loader rejects: " << show(minus(in_schema, in_loader)));
}

// "a, b, c" (the loader's hint lists) as a set.
std::set<std::string> listed(const std::string& names) {
  std::set<std::string> out;
  for (auto n : qpo::util::split(names, ',')) {
    while (!n.empty() && n.front() == ' ') n.remove_prefix(1);
    out.emplace(n);
  }
  return out;
}

TEST_CASE("the schema's wire expectation is a qp and the wire facts; a packet event's actions are the loader's") {
  YAML::Node schema = load_schema();
  YAML::Node item = schema["properties"]["wire"]["properties"]["expect"]["items"];
  REQUIRE(item);
  auto want = listed(qpo::util::wire_fact_names());
  CHECK(want.size() == 14);
  want.insert("qp");
  auto in_schema = property_names(item);
  CHECK_MESSAGE(minus(want, in_schema).empty(), "loader takes, schema lacks: " << show(minus(want, in_schema)));
  CHECK_MESSAGE(minus(in_schema, want).empty(), "schema lists, loader rejects: " << show(minus(in_schema, want)));
  std::set<std::string> actions;
  for (const auto& v : definition(schema, "packet_event")["properties"]["action"]["enum"]) actions.insert(v.as<std::string>());
  CHECK(show(actions) == show(listed(qpo::util::event_action_names())));
}

TEST_CASE("the scenario schema's root properties match the loader's top-level keys") {
  YAML::Node schema = load_schema();
  auto in_schema = property_names(schema);
  auto in_loader = as_set(qpo::scenario::keys::top_level());
  CHECK_MESSAGE(minus(in_loader, in_schema).empty(), "loader accepts, schema lacks: " << show(minus(in_loader, in_schema)));
  CHECK_MESSAGE(minus(in_schema, in_loader).empty(), "schema lists, loader rejects: " << show(minus(in_schema, in_loader)));
}

TEST_CASE("the schema's transition properties are the rule table's value fields (minus qp_state) plus expect, defaults") {
  YAML::Node schema = load_schema();
  YAML::Node def = definition(schema, "transition");
  REQUIRE_MESSAGE(def, "schema has no definition 'transition'");
  auto in_schema = property_names(def);
  std::set<std::string> want;
  for (const auto& [field, rule] : qpo::spec::RuleTable::builtin().value_rules())
    if (field != "qp_state") want.insert(field);
  for (const auto& k : qpo::scenario::keys::transition_control()) want.insert(k);
  CHECK(want.count("expect") == 1);
  CHECK(want.count("defaults") == 1);
  CHECK_MESSAGE(minus(want, in_schema).empty(), "rule table has, schema lacks: " << show(minus(want, in_schema)));
  CHECK_MESSAGE(minus(in_schema, want).empty(), "schema lists, rule table lacks: " << show(minus(in_schema, want)));
}

TEST_CASE("the schema's ah_attr and grh properties are the rule table's ah_fields and grh_fields") {
  YAML::Node schema = load_schema();
  const auto& rules = qpo::spec::RuleTable::builtin();
  for (const auto& entry : {std::pair{"ah_attr", &rules.ah_fields()}, std::pair{"grh", &rules.grh_fields()}}) {
    // Not a structured binding: clang 14 cannot capture one in CAPTURE's lambda.
    const char* name = entry.first;
    const auto* table = entry.second;
    CAPTURE(name);
    YAML::Node def = definition(schema, name);
    REQUIRE_MESSAGE(def, "schema has no definition '" << name << "'");
    auto in_schema = property_names(def);
    std::set<std::string> want;
    for (const auto& entry : *table) want.insert(entry.first);
    if (std::string(name) == "ah_attr") want.insert("grh");  // the nested global route
    CHECK_MESSAGE(minus(want, in_schema).empty(), "rule table has, schema lacks: " << show(minus(want, in_schema)));
    CHECK_MESSAGE(minus(in_schema, want).empty(), "schema lists, rule table lacks: " << show(minus(in_schema, want)));
  }
}

// The editor's list of `event:`/`forbid:` names comes from the one event table: every
// IBV_EVENT_ name and its short form, nothing else (the loader takes both).
TEST_CASE("the schema's event and forbid enums are util/async_event_names' names, long and short") {
  YAML::Node schema = load_schema();
  YAML::Node def = definition(schema, "timeline_step");
  REQUIRE_MESSAGE(def, "schema has no definition 'timeline_step'");
  std::set<std::string> want;
  for (const auto& name : qpo::util::async_event_names()) {
    want.insert(name);
    want.insert(name.substr(std::string("IBV_EVENT_").size()));
  }
  int checked = 0;
  for (const auto& alt : def["oneOf"])
    for (const char* key : {"event", "forbid"}) {
      YAML::Node props = alt["properties"];
      if (!props || !props[key] || !props[key]["enum"]) continue;
      YAML::Node prop = props[key];
      std::set<std::string> in_schema;
      for (const auto& v : prop["enum"]) in_schema.insert(v.as<std::string>());
      CHECK_MESSAGE(minus(want, in_schema).empty(), std::string(key) << ": the table has, the schema lacks: " << show(minus(want, in_schema)));
      CHECK_MESSAGE(minus(in_schema, want).empty(), std::string(key) << ": the schema lists, the table lacks: " << show(minus(in_schema, want)));
      ++checked;
    }
  CHECK(checked == 2);
}
