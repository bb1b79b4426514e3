#include "spec/predict.h"

namespace qpo::spec {

MaskPrediction predict_mask(const RuleTable& rules, int type, QpState from, QpState to, Mask mask, bool in_kernel) {
  MaskPrediction p;
  p.ignored = in_kernel ? 0 : mask & rules.user_space_ignores(type);
  p.result = rules.check(type, from, to, mask & ~p.ignored);
  return p;
}

ValuePrediction predict_value(const ValueRule& rule, uint64_t value, const std::string& provider, uint64_t device_cap) {
  ValuePrediction p;
  p.read_back = value;
  if (rule.has_range && value < rule.min) {
    p.refused = refuses(rule, Bound::Below, provider);
    return p;
  }
  if (!rule.device_cap.empty() && device_cap > 0) {
    p.refused = value > device_cap;  // the device's caps bound it, not the rule's nominal maximum
    return p;
  }
  if (!rule.has_range || value <= rule.max) return p;
  p.refused = refuses(rule, Bound::Above, provider);
  if (rule.above_by == "lint" && rule.max > 0 && ((rule.max + 1) & rule.max) == 0)
    p.read_back = value & rule.max;  // a field of whole bits (PSNs): the kernel masks it
  return p;
}

}  // namespace qpo::spec
