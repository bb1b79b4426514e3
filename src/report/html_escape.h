#pragma once
// Escaping for the HTML report: every string that comes from a scenario, a script or the
// device goes through one of these, so a YAML string can never become markup or script.
#include <string>
#include <string_view>

namespace qpo::report::html {

// Text and attribute values (always double-quoted): & < > " ' as entities; control bytes other
// than tab, newline and carriage return as U+FFFD.
std::string escape(std::string_view s);

// JSON inside <script type="application/json">: < > & as \u003c \u003e \u0026, so no "</script>"
// or "<!--" can end or bend the element (valid JSON: those bytes only occur inside strings).
std::string script_json(std::string_view json);

// A number as the JSON results print it (%.6g), so the plots' data-* attributes and the JSON
// compare as text; "nan" for a non-finite one.
std::string num(double v);

}  // namespace qpo::report::html
