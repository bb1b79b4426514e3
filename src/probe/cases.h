#pragma once
// The cases `qpo probe` tries, from the rule tables alone: for each (cur, next) pair of a QP
// type, the table's minimal mask, each required bit removed, each optional or forbidden bit
// added, IBV_QP_STATE alone on an invalid pair, and each ranged attribute the transition takes
// at and just past its bounds. Each case carries qpo's prediction, from the same predictor as
// `qpo rules check` (spec/predict.h). No device needed: unit tests enumerate them.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "spec/providers.h"
#include "spec/rules.h"

namespace qpo::probe {

// What the prediction of a value depends on besides the rule tables.
struct DeviceFacts {
  std::string provider;                   // "rxe"
  std::map<std::string, uint64_t> caps;   // ibv_device_attr members a value rule names (device_cap)
};

struct Case {
  int type = 0;  // index into RuleTable::types()
  spec::QpState cur = spec::QpState::RESET, next = spec::QpState::RESET;
  spec::Mask mask = 0;
  spec::ProbeCaseKey key;
  std::string predicted;  // "ok", "EINVAL", "ok, reads back N"
};

// The states a fresh QP is driven into before a case: RESET, INIT, RTR, RTS, SQD, ERR (SQE
// needs a failed send; no user-driven path reaches it).
const std::vector<spec::QpState>& reachable_states();

// Every case for one QP type, in a fixed order (the order of the report and of providers.yaml).
std::vector<Case> cases_for_type(const spec::RuleTable& rules, int type, const DeviceFacts& facts);

}  // namespace qpo::probe
