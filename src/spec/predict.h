#pragma once
// What qpo predicts ibv_modify_qp answers a user-space caller, from the rule tables: the one
// predictor behind `qpo rules check`, `qpo probe` and the lab's conformance test.
#include <cstdint>
#include <string>

#include "spec/rules.h"

namespace qpo::spec {

struct MaskPrediction {
  CheckResult result;  // the state table's verdict on the mask uverbs passes on
  Mask ignored = 0;    // bits uverbs removes for this QP type (XRC): ok, the values are ignored
  bool ok() const { return result.ok; }
};

// `in_kernel`: the state table's own verdict on the whole mask, as an in-kernel caller of
// ib_modify_qp gets it (no bits removed).
MaskPrediction predict_mask(const RuleTable& rules, int type, QpState from, QpState to, Mask mask,
                            bool in_kernel = false);

// What a device does with `value` for the value rule `rule` (a field inside the transition's mask).
struct ValuePrediction {
  bool refused = false;  // EINVAL
  uint64_t read_back = 0;  // what ibv_query_qp should return when accepted
};
// `provider`: the device's provider ("rxe"); `device_cap`: the ibv_device_attr member the rule
// names (rule.device_cap), or 0 when the rule names none.
ValuePrediction predict_value(const ValueRule& rule, uint64_t value, const std::string& provider,
                              uint64_t device_cap);

}  // namespace qpo::spec
