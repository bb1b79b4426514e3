#pragma once
// Human and machine renderings of the same diagnostics.
#include <map>
#include <string>

#include "diag/diagnostic.h"
#include "util/json_writer.h"
#include "util/source_text.h"

namespace qpo::diag {

using Sources = std::map<std::string, const util::SourceText*>;

// rustc-style: "error[Q302]: message\n  --> file:line:col\n   |\n 12 |   RTR: {...}\n   |   ^\n"
std::string render_text(const Diagnostic& d, const Sources& sources, bool color);

// Appends the diagnostic as one JSON object.
void render_json(util::JsonWriter& w, const Diagnostic& d);

}  // namespace qpo::diag
