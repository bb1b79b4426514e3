#include "diag/render.h"

#include <string>

#include "util/strings.h"

namespace qpo::diag {

namespace {
const char* color_of(Severity s) {
  switch (s) {
    case Severity::Error: return "\033[1;31m";
    case Severity::Warning: return "\033[1;33m";
    case Severity::Note: return "\033[1;36m";
  }
  return "";
}

void quote_line(std::string& out, const util::SourceLoc& loc, const Sources& sources,
                const std::string& label) {
  auto it = sources.find(loc.file);
  if (it == sources.end() || loc.line <= 0) return;
  std::string_view text = it->second->line(loc.line);
  std::string number = std::to_string(loc.line);
  std::string gutter(number.size(), ' ');
  out += " " + gutter + " |\n";
  // Tabs would misplace the caret; show them as one space each.
  std::string shown(text.substr(0, 200));
  for (char& c : shown)
    if (c == '\t' || static_cast<unsigned char>(c) < 0x20 || c == 0x7F) c = ' ';
  shown = util::printable(shown);  // format characters and broken UTF-8 shown as escapes
  out += " " + number + " | " + shown + "\n";
  int col = loc.col > 0 ? loc.col : 1;
  if (col > static_cast<int>(shown.size()) + 1) col = static_cast<int>(shown.size()) + 1;
  out += " " + gutter + " | " + std::string(static_cast<size_t>(col - 1), ' ') + "^";
  if (!label.empty()) out += " " + label;
  out += "\n";
}
}  // namespace

std::string render_text(const Diagnostic& d, const Sources& sources, bool color) {
  std::string out;
  if (color) out += color_of(d.severity);
  out += severity_name(d.severity);
  if (!d.code.empty()) out += "[" + d.code + "]";
  if (color) out += "\033[0m\033[1m";
  out += ": " + util::printable(d.message);
  if (color) out += "\033[0m";
  out += "\n";
  if (!d.loc.file.empty()) {
    out += "  --> " + util::printable(d.loc.file.str());
    if (d.loc.line > 0) out += ":" + std::to_string(d.loc.line) + ":" + std::to_string(d.loc.col);
    if (!d.path.empty()) out += "  (" + util::printable(d.path, 512) + ")";
    out += "\n";
  }
  quote_line(out, d.loc, sources, "");
  for (const auto& r : d.related) {
    out += "  --> " + util::printable(r.loc.file.str());
    if (r.loc.line > 0) out += ":" + std::to_string(r.loc.line) + ":" + std::to_string(r.loc.col);  // not for a --set flag
    out += "\n";
    quote_line(out, r.loc, sources, util::printable(r.label));
  }
  if (!d.rule.empty()) out += "   = rule: " + util::printable(d.rule) + "\n";
  if (!d.hint.empty()) out += "   = help: " + util::printable(d.hint) + "\n";
  return out;
}

void render_json(util::JsonWriter& w, const Diagnostic& d) {
  w.begin_object();
  w.field("code", d.code);
  w.field("severity", severity_name(d.severity));
  w.field("file", d.loc.file.str());
  w.field("line", d.loc.line);
  w.field("column", d.loc.col);
  w.field("path", d.path);
  w.field("message", d.message);
  w.field("rule", d.rule);
  w.field("hint", d.hint);
  w.key("related").begin_array();
  for (const auto& r : d.related) {
    w.begin_object();
    w.field("file", r.loc.file.str());
    w.field("line", r.loc.line);
    w.field("column", r.loc.col);
    w.field("label", r.label);
    w.end_object();
  }
  w.end_array();
  w.end_object();
}

}  // namespace qpo::diag
