// Parses schemas/verbs-rules.yaml into a RuleTable. Malformed data is a bug in qpo, so it
// throws with the offending key rather than producing diagnostics.
#include <yaml-cpp/yaml.h>

#include <set>
#include <stdexcept>

#include "spec/rules.h"
#include "util/strings.h"

namespace qpo::spec {

extern const char kBuiltinRulesYaml[];

struct RulesLoader {
  RuleTable& t;

  [[noreturn]] static void fail(const std::string& what, const YAML::Node& n) {
    throw std::runtime_error("verbs-rules: " + what + " (line " + std::to_string(n.Mark().line + 1) + ")");
  }

  Mask mask_of(const YAML::Node& list) {
    Mask m = 0;
    for (const auto& item : list) {
      std::string name = "IBV_QP_" + item.as<std::string>();
      bool found = false;
      for (const auto& a : t.attrs_)
        if (a.mask_name == name) {
          m |= a.mask();
          found = true;
        }
      if (!found) fail("unknown attribute " + name, item);
    }
    return m;
  }

  void per_type(const YAML::Node& map, std::vector<Mask>& out) {
    out.assign(t.types_.size(), 0);
    if (!map) return;
    for (const auto& kv : map) {
      int idx = t.type_index(kv.first.as<std::string>());
      if (idx < 0) fail("unknown QP type " + kv.first.as<std::string>(), kv.first);
      out[static_cast<size_t>(idx)] = mask_of(kv.second);
    }
  }

  // enforced_by: WHO (both bounds), or { below: WHO, above: WHO } for a range whose bounds
  // different parts of the stack enforce.
  void enforcers(const std::string& field, const YAML::Node& n, ValueRule& r) {
    static const std::set<std::string> kEnforcers = {"", "kernel", "provider", "field", "none", "device", "lint"};
    const auto& e = n["enforced_by"];
    if (e && e.IsMap()) {
      if (!r.has_range) fail(field + ": enforced_by per bound needs min and max", e);
      if (!e["below"] || !e["above"] || e.size() != 2) fail(field + ": enforced_by per bound takes below: and above:", e);
      r.below_by = e["below"].as<std::string>();
      r.above_by = e["above"].as<std::string>();
    } else if (e) {
      r.below_by = r.above_by = e.as<std::string>();
    }
    for (const auto* by : {&r.below_by, &r.above_by})
      if (!kEnforcers.count(*by)) fail(field + ": enforced_by is kernel, provider, field, none, device or lint", n);
    if (n["providers"])
      for (const auto& p : n["providers"]) r.providers.push_back(p.as<std::string>());
    if ((r.below_by == "provider" || r.above_by == "provider") != !r.providers.empty())
      fail(field + ": enforced_by: provider goes with a providers: list, and only it", n);
  }

  ValueRule value_rule(const std::string& field, const YAML::Node& n) {
    ValueRule r;
    r.field = field;
    r.type = n["type"].as<std::string>();
    if (n["enum"]) r.enum_name = n["enum"].as<std::string>();
    if (n["min"] && n["max"]) {
      r.has_range = true;
      r.min = n["min"].as<uint64_t>();
      r.max = n["max"].as<uint64_t>();
    }
    enforcers(field, n, r);
    if (n["default"]) {
      const auto& d = n["default"];
      if (d.IsSequence()) {
        std::vector<std::string> items;
        for (const auto& i : d) items.push_back(i.as<std::string>());
        r.default_text = "[" + util::join(items, ", ") + "]";
      } else {
        r.default_text = d.as<std::string>();
      }
    }
    if (n["note"]) r.note = n["note"].as<std::string>();
    if (n["device_cap"]) r.device_cap = n["device_cap"].as<std::string>();
    return r;
  }

  void load(const YAML::Node& root) {
    t.source_ = root["source"].as<std::string>();
    for (const auto& ty : root["qp_types"]) {
      t.types_.push_back({ty["name"].as<std::string>(), ty["kernel"].as<std::string>(), ty["ibv"].as<int>(),
                          ty["user"].as<bool>()});
    }
    for (const auto& a : root["attributes"]) {
      AttrInfo info;
      info.mask_name = a["mask"].as<std::string>();
      info.bit = a["bit"].as<int>();
      for (const auto& f : a["fields"]) info.fields.push_back(f.as<std::string>());
      t.known_bits_ |= info.mask();
      t.attrs_.push_back(std::move(info));
    }
    for (auto& row : t.cells_)
      for (auto& c : row) {
        c.required.assign(t.types_.size(), 0);
        c.optional.assign(t.types_.size(), 0);
      }
    for (const auto& tr : root["transitions"]) {
      auto from = parse_state(tr["from"].as<std::string>());
      auto to = parse_state(tr["to"].as<std::string>());
      if (!from || !to) fail("unknown state", tr);
      Cell& c = t.cells_[static_cast<int>(*from)][static_cast<int>(*to)];
      if (c.valid) fail("duplicate transition", tr);
      c.valid = true;
      per_type(tr["required"], c.required);
      per_type(tr["optional"], c.optional);
    }
    per_type(root["user_space_ignores"], t.user_space_ignores_);
    for (const auto& s : root["cur_state_allowed_from"]) {
      auto st = parse_state(s.as<std::string>());
      if (!st) fail("unknown state", s);
      t.cur_state_from_ |= 1u << static_cast<int>(*st);
    }
    for (const auto& kv : root["values"]) {
      auto name = kv.first.as<std::string>();
      t.values_[name] = value_rule(name, kv.second);
    }
    for (const auto& kv : root["ah_fields"]) {
      auto name = kv.first.as<std::string>();
      t.ah_fields_[name] = value_rule(name, kv.second);
    }
    for (const auto& kv : root["grh_fields"]) {
      auto name = kv.first.as<std::string>();
      t.grh_fields_[name] = value_rule(name, kv.second);
    }
    for (const auto& e : root["enums"]) {
      auto& list = t.enums_[e.first.as<std::string>()];
      for (const auto& kv : e.second) list.emplace_back(kv.first.as<std::string>(), kv.second.as<uint64_t>());
    }
    for (const auto& r : root["mr_access_rules"]) {
      MrAccessRule rule;
      for (const auto& i : r["if_any"]) rule.if_any.push_back(i.as<std::string>());
      rule.need = r["need"].as<std::string>();
      rule.enforced_by = r["enforced_by"].as<std::string>();
      t.mr_rules_.push_back(std::move(rule));
    }
  }
};

RuleTable RuleTable::parse(std::string_view yaml_text) {
  RuleTable t;
  try {
    RulesLoader{t}.load(YAML::Load(std::string(yaml_text)));
  } catch (const YAML::Exception& e) {
    throw std::runtime_error(std::string("verbs-rules: ") + e.what());
  }
  return t;
}

const RuleTable& RuleTable::builtin() {
  static const RuleTable table = parse(kBuiltinRulesYaml);
  return table;
}

}  // namespace qpo::spec
