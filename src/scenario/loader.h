#pragma once
// YAML scenario file -> Scenario. Reports every structural problem (unknown keys, wrong
// types, bad units, duplicates) into the sink and keeps going; semantic checks live in check/.
#include <optional>
#include <string>
#include <vector>

#include "diag/diagnostic.h"
#include "scenario/model.h"
#include "util/source_text.h"

namespace qpo::scenario {

// nullopt only when the text is not YAML at all (the sink says why, with the position).
// `overrides` are `--set` PATH=VALUE texts, applied to the YAML tree before it is read
// (scenario/overrides.h); what they set is reported at the flag instead of a file line, or at
// `override_origins[i]` when given (a matrix entry).
std::optional<Scenario> load_scenario(const util::SourceText& source, diag::DiagSink& sink,
                                      const std::vector<std::string>& overrides = {},
                                      const std::vector<util::SourceLoc>& override_origins = {});

}  // namespace qpo::scenario
