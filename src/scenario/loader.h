#pragma once
// YAML scenario file -> Scenario. Reports every structural problem (unknown keys, wrong
// types, bad units, duplicates) into the sink and keeps going; semantic checks live in check/.
#include <optional>

#include "diag/diagnostic.h"
#include "scenario/model.h"
#include "util/source_text.h"

namespace qpo::scenario {

// nullopt only when the text is not YAML at all (the sink says why, with the position).
std::optional<Scenario> load_scenario(const util::SourceText& source, diag::DiagSink& sink);

}  // namespace qpo::scenario
