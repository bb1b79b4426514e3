#include "spec/rules.h"

#include <algorithm>

#include "util/strings.h"

namespace qpo::spec {

namespace {
constexpr const char* kStateNames[kStateCount] = {"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR"};
}

const char* state_name(QpState s) { return kStateNames[static_cast<int>(s)]; }

std::optional<QpState> parse_state(std::string_view text) {
  std::string upper = util::to_upper(util::trim(text));
  std::string_view s = upper;
  if (s.rfind("IBV_QPS_", 0) == 0) s.remove_prefix(8);
  for (int i = 0; i < kStateCount; ++i)
    if (s == kStateNames[i]) return static_cast<QpState>(i);
  return std::nullopt;
}

int RuleTable::type_index(std::string_view name) const {
  std::string upper = util::to_upper(util::trim(name));
  std::string_view s = upper;
  if (s.rfind("IBV_QPT_", 0) == 0) s.remove_prefix(8);
  for (size_t i = 0; i < types_.size(); ++i) {
    if (s == types_[i].name) return static_cast<int>(i);
    std::string_view k = types_[i].kernel;
    if (k.rfind("IB_QPT_", 0) == 0) k.remove_prefix(7);
    if (s == k || upper == types_[i].kernel) return static_cast<int>(i);
  }
  return -1;
}

std::vector<std::string> RuleTable::type_names() const {
  std::vector<std::string> names;
  for (const auto& t : types_) names.push_back(t.name);
  return names;
}

Mask RuleTable::required(int type, QpState from, QpState to) const {
  return cell(from, to).required[static_cast<size_t>(type)];
}

Mask RuleTable::optional(int type, QpState from, QpState to) const {
  return cell(from, to).optional[static_cast<size_t>(type)];
}

CheckResult RuleTable::check(int type, QpState from, QpState to, Mask mask) const {
  const Mask state_bit = 1u << 0;
  const Mask cur_state_bit = 1u << 1;
  CheckResult r;
  r.from = from;
  r.to = (mask & state_bit) ? to : from;
  if ((mask & cur_state_bit) && !cur_state_allowed_from(from)) {
    r.ok = false;
    r.cur_state_illegal = true;
  }
  const Cell& c = cell(r.from, r.to);
  if (!c.valid) {
    r.ok = false;
    r.invalid_transition = true;
    return r;
  }
  Mask req = c.required[static_cast<size_t>(type)];
  Mask opt = c.optional[static_cast<size_t>(type)];
  r.missing = req & ~mask;
  r.forbidden = mask & ~(req | opt | state_bit);
  if (r.missing || r.forbidden) r.ok = false;
  return r;
}

const AttrInfo* RuleTable::attr_by_field(std::string_view field) const {
  for (const auto& a : attrs_)
    for (const auto& f : a.fields)
      if (f == field) return &a;
  return nullptr;
}

const AttrInfo* RuleTable::attr_by_bit(int bit) const {
  for (const auto& a : attrs_)
    if (a.bit == bit) return &a;
  return nullptr;
}

std::string enforced_by_text(const ValueRule& r) {
  if (!per_bound(r)) return r.above_by;
  return "below: " + r.below_by + ", above: " + r.above_by;
}

std::string enforcer_text(const ValueRule& r, Bound b) {
  const std::string& by = enforced_by(r, b);
  if (by == "kernel") return "the kernel rejects it: EINVAL";
  if (by == "provider")
    return "providers " + util::join(r.providers, ", ") + " reject it: EINVAL; others may store or truncate it";
  if (by == "field") {
    int bits = 0;
    while (bits < 64 && (uint64_t{1} << bits) <= r.max) ++bits;
    return "only the " + std::to_string(bits) +
           "-bit IBTA field bounds it: the kernel accepts it, and the provider stores it as is or truncates it";
  }
  if (by == "none") return "nothing rejects it: the kernel accepts it and the provider stores it as is";
  if (by == "device") return "the device's caps decide, at run time";
  if (by == "lint") return "qpo's advice: the kernel accepts it";
  return "not enforced";
}

std::string enforcer_text(const ValueRule& r) {
  if (!per_bound(r)) return enforcer_text(r, Bound::Above);
  return "below " + std::to_string(r.min) + ": " + enforcer_text(r, Bound::Below) + "; above " + std::to_string(r.max) +
         ": " + enforcer_text(r, Bound::Above);
}

bool refuses(const ValueRule& r, Bound b, const std::string& provider) {
  const std::string& by = enforced_by(r, b);
  if (by == "kernel") return true;
  if (by != "provider") return false;
  return std::find(r.providers.begin(), r.providers.end(), provider) != r.providers.end();
}

const ValueRule* RuleTable::value_rule(std::string_view field) const {
  auto it = values_.find(std::string(field));
  return it == values_.end() ? nullptr : &it->second;
}

const std::vector<std::pair<std::string, uint64_t>>* RuleTable::enum_values(std::string_view name) const {
  auto it = enums_.find(name);
  return it == enums_.end() ? nullptr : &it->second;
}

}  // namespace qpo::spec
