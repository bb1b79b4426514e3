// A script workload's `args:` (plain values handed to the script's setup(args)) and
// `thresholds:` (limits on its summary that decide pass or fail).
#include <cctype>
#include <cstdlib>

#include "scenario/keys.h"
#include "scenario/loader_internal.h"
#include "scenario/thresholds.h"
#include "util/strings.h"

namespace qpo::scenario::detail {

namespace {

bool is_bool_word(const std::string& lower) {
  return lower == "true" || lower == "false" || lower == "yes" || lower == "no" || lower == "on" || lower == "off";
}

// -12, 0x1f: what YAML's core schema reads as an integer (within int64).
std::optional<int64_t> as_integer(std::string_view s) {
  bool negative = !s.empty() && s[0] == '-';
  if (negative || (!s.empty() && s[0] == '+')) s.remove_prefix(1);
  auto v = util::parse_uint(s);
  if (!v || *v > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
  return negative ? -static_cast<int64_t>(*v) : static_cast<int64_t>(*v);
}

// 2.5, -0.1, 1e-3 (not inf/nan, not hex floats).
std::optional<double> as_number(const std::string& s) {
  if (s.empty() || s.find_first_not_of("0123456789.eE+-") != std::string::npos) return std::nullopt;
  if (s.find_first_of("0123456789") == std::string::npos) return std::nullopt;
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (*end != '\0') return std::nullopt;
  return v;
}

// A scalar typed as YAML reads it; quoted scalars are always strings ("40" stays text).
ScriptValue scalar_value(const yaml::Node& n) {
  ScriptValue v;
  v.text = n.Scalar();
  if (n.Tag() == "!") return v;  // quoted
  std::string t(util::trim(v.text));
  std::string lower = util::to_lower(t);
  if (is_bool_word(lower)) {
    v.kind = ScriptValue::Kind::Bool;
    v.boolean = lower == "true" || lower == "yes" || lower == "on";
  } else if (auto i = as_integer(t)) {
    v.kind = ScriptValue::Kind::Int;
    v.integer = *i;
  } else if (auto d = as_number(t)) {
    v.kind = ScriptValue::Kind::Number;
    v.number = *d;
  }
  return v;
}

std::optional<ScriptValue> arg_value(YamlReader& r, const yaml::Node& n, const std::string& path) {
  if (n.IsScalar()) return scalar_value(n);
  if (n.IsSequence()) {
    ScriptValue list;
    list.kind = ScriptValue::Kind::List;
    bool ok = true;
    for (size_t i = 0; i < n.size(); ++i) {
      if (!n[i].IsScalar()) {
        r.wrong_type(n[i], path + "[" + std::to_string(i) + "]", "a number, string or boolean");
        ok = false;
        continue;
      }
      list.items.push_back(scalar_value(n[i]));
    }
    if (ok) return list;
    return std::nullopt;
  }
  auto& d = r.wrong_type(n, path, "a number, string, boolean or a list of them");
  d.hint = "script args are plain values: the script's setup(args) receives them (docs/lua.md)";
  return std::nullopt;
}

}  // namespace

void load_script_args(YamlReader& r, const yaml::Node& n, const std::string& path, Workload& w) {
  w.args_loc = r.loc(n);
  for (auto& [key, key_loc, value] : r.keyed_entries(n, path, nullptr, "a script's args")) {
    std::string p = join_path(path, key);
    if (auto v = arg_value(r, value, p)) {
      ScriptArg a;
      a.key = key;
      a.value = std::move(*v);
      a.loc = key_loc;
      w.args.push_back(std::move(a));
    }
  }
}

void load_thresholds(YamlReader& r, const yaml::Node& n, const std::string& path, Workload& w) {
  w.thresholds_loc = r.loc(n);
  for (auto& [key, value] : r.entries(n, path, &keys::threshold(), "workload thresholds")) {
    std::string p = join_path(path, key);
    const ThresholdKind* kind = threshold_kind(key);
    if (!kind) continue;  // entries() reported it
    if (!value.IsScalar()) {
      r.wrong_type(value, p, "a limit such as 40MB/s, 0.5Mpps or 12us");
      continue;
    }
    auto limit = parse_limit(kind->unit, value.Scalar());
    if (!limit) {
      auto& d = r.sink().error("Q103", r.loc(value), p,
                               "'" + value.Scalar().substr(0, 40) + "' is not " + limit_what(kind->unit));
      d.rule = "thresholds: a non-negative number, optionally with a unit";
      d.hint = limit_examples(kind->unit);
      continue;
    }
    Threshold t;
    t.name = kind->name;
    t.field = kind->field;
    t.minimum = kind->minimum;
    t.limit = *limit;
    t.unit = unit_label(kind->unit);
    t.display_scale = display_scale(kind->unit);
    t.text = value.Scalar();
    t.loc = r.loc(value);
    w.thresholds.push_back(std::move(t));
  }
}

}  // namespace qpo::scenario::detail
