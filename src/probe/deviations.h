#pragma once
// A probe's results as data: the disagreements grouped into providers.yaml deviations (one per
// case and answer, listing the transitions where it happened), a readable table of them, and
// the comparison of two entries that tells which case a kernel now answers differently.
#include <string>
#include <vector>

#include "probe/runner.h"
#include "spec/providers.h"

namespace qpo::probe {

// The provider entry a probe writes: probed (device, kernel, date, counts, QP types not
// probed) and the deviations, in case order.
spec::ProviderEntry entry_from(const Report& report);

// The disagreements as a table: type, cur->next, mask in words, value, predicted, answered.
std::string disagreement_table(const Report& report);

// One line per (case, transition) whose answer differs between `recorded` and `found`, e.g.
// "RC INIT->RTR with IBV_QP_ALT_PATH: recorded EINVAL, the device now answers ok". Empty: same.
std::vector<std::string> compare_deviations(const spec::ProviderEntry& recorded, const spec::ProviderEntry& found);

}  // namespace qpo::probe
