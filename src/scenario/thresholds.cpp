#include "scenario/thresholds.h"

namespace qpo::scenario {

const std::vector<ThresholdKind>& threshold_kinds() {
  static const std::vector<ThresholdKind> kinds{
      {"min_bw", "bw_avg", true, LimitUnit::Bandwidth},
      {"min_msg_rate", "msg_rate", true, LimitUnit::MessageRate},
      {"max_p99", "p99", false, LimitUnit::Latency},
      {"max_p999", "p999", false, LimitUnit::Latency},
      {"max_avg", "t_avg", false, LimitUnit::Latency},
      {"max_typical", "t_typical", false, LimitUnit::Latency},
      {"max_loss", "loss", false, LimitUnit::Fraction},
  };
  return kinds;
}

const ThresholdKind* threshold_kind(std::string_view name) {
  for (const auto& k : threshold_kinds())
    if (name == k.name) return &k;
  return nullptr;
}

}  // namespace qpo::scenario
