#pragma once
// qpo validate --provider: the steps of a checked scenario that the rule tables predict succeed
// but the provider's recorded deviations (schemas/providers.yaml, `qpo probe --out`) say it
// refuses. Warning Q308 names the provider, the deviation and the file it comes from; warning
// Q310 a capability the scenario needs that the provider lacks (its `unsupported:` list).
#include <string>

#include "diag/diagnostic.h"
#include "scenario/model.h"
#include "spec/providers.h"

namespace qpo::check {

void check_provider(const scenario::Scenario& checked, const spec::ProviderEntry& provider, const std::string& origin,
                    diag::DiagSink& sink);

}  // namespace qpo::check
