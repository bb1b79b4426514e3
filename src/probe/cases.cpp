#include "probe/cases.h"

#include "spec/predict.h"
#include "verbs/qp_attr_fields.h"

namespace qpo::probe {

namespace {

using spec::ProbeCaseKey;
using spec::QpState;

// The values a ranged attribute is probed with: its bounds, and one past each bound that the
// ibv_qp_attr member can hold. A rule bounded by a device cap is probed at the cap and past it.
std::vector<uint64_t> probe_values(const spec::ValueRule& rule, const verbs::QpAttrField& field,
                                   const DeviceFacts& facts) {
  uint64_t width_max = field.size >= 4 ? 0xFFFFFFFFull : (uint64_t{1} << (8 * field.size)) - 1;
  if (!rule.device_cap.empty()) {
    auto cap = facts.caps.find(rule.device_cap);
    if (cap == facts.caps.end()) return {};
    std::vector<uint64_t> v;
    if (rule.has_range && rule.min > 0) v.push_back(rule.min - 1);
    v.push_back(cap->second);
    if (cap->second < width_max) v.push_back(cap->second + 1);
    return v;
  }
  if (!rule.has_range || rule.above_by == "device") return {};  // the device decides: nothing to predict
  std::vector<uint64_t> v;
  if (rule.min > 0) v.push_back(rule.min - 1);
  v.push_back(rule.min);
  if (rule.max != rule.min) v.push_back(rule.max);
  if (rule.max < width_max) v.push_back(rule.max + 1);
  return v;
}

std::string predict(const spec::RuleTable& rules, const Case& c, const DeviceFacts& facts) {
  if (!spec::predict_mask(rules, c.type, c.cur, c.next, c.mask).ok()) return "EINVAL";
  if (c.key.kind != ProbeCaseKey::Kind::Value) return "ok";
  const auto* rule = rules.value_rule(c.key.attr);
  auto cap = facts.caps.find(rule->device_cap);
  auto v = spec::predict_value(*rule, c.key.value, facts.provider, cap == facts.caps.end() ? 0 : cap->second);
  if (v.refused) return "EINVAL";
  const auto* field = verbs::qp_attr_field(c.key.attr);
  if (field->read_back && v.read_back != c.key.value) return "ok, reads back " + std::to_string(v.read_back);
  return "ok";
}

}  // namespace

const std::vector<QpState>& reachable_states() {
  static const std::vector<QpState> states{QpState::RESET, QpState::INIT, QpState::RTR,
                                           QpState::RTS,   QpState::SQD,  QpState::ERR};
  return states;
}

std::vector<Case> cases_for_type(const spec::RuleTable& rules, int type, const DeviceFacts& facts) {
  std::vector<Case> out;
  auto add = [&](QpState cur, QpState next, spec::Mask mask, ProbeCaseKey key) {
    Case c{type, cur, next, mask, std::move(key), ""};
    c.predicted = predict(rules, c, facts);
    out.push_back(std::move(c));
  };
  const spec::Mask state_bit = 1u;
  for (QpState cur : reachable_states()) {
    for (int n = 0; n < spec::kStateCount; ++n) {
      auto next = static_cast<QpState>(n);
      if (next == QpState::SQE) continue;  // not a state a caller moves a QP into
      if (!rules.cell(cur, next).valid) {
        add(cur, next, state_bit, {ProbeCaseKey::Kind::Invalid, "", 0});
        continue;
      }
      spec::Mask req = rules.required(type, cur, next) | state_bit;
      spec::Mask opt = rules.optional(type, cur, next);
      add(cur, next, req, {});
      for (const auto& attr : rules.attributes()) {
        spec::Mask bit = attr.mask();
        if (bit == state_bit) continue;
        if (req & bit) add(cur, next, req & ~bit, {ProbeCaseKey::Kind::Without, attr.mask_name, 0});
        else add(cur, next, req | bit, {ProbeCaseKey::Kind::With, attr.mask_name, 0});
      }
      for (const auto& field : verbs::kQpAttrFields) {
        spec::Mask bit = static_cast<spec::Mask>(field.mask);
        const auto* rule = rules.value_rule(field.name);
        if (!rule || !((req | opt) & bit)) continue;
        for (uint64_t v : probe_values(*rule, field, facts))
          add(cur, next, req | bit, {ProbeCaseKey::Kind::Value, field.name, v});
      }
    }
  }
  return out;
}

}  // namespace qpo::probe
