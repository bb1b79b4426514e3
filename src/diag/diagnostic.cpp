#include "diag/diagnostic.h"

#include <algorithm>
#include <tuple>

namespace qpo::diag {

const char* severity_name(Severity s) {
  switch (s) {
    case Severity::Error: return "error";
    case Severity::Warning: return "warning";
    case Severity::Note: return "note";
  }
  return "?";
}

Diagnostic& DiagSink::add(Diagnostic d) {
  if (items_.size() >= cap_) {
    ++dropped_;
    static thread_local Diagnostic sink_hole;
    // Still count errors past the cap so the exit code stays right.
    if (d.severity == Severity::Error && items_.back().code != "Q999") {
      Diagnostic more;
      more.code = "Q999";
      more.severity = Severity::Error;
      more.message = "too many problems; output stops here";
      items_.push_back(std::move(more));
    }
    sink_hole = std::move(d);
    return sink_hole;
  }
  items_.push_back(std::move(d));
  return items_.back();
}

Diagnostic& DiagSink::error(std::string code, util::SourceLoc loc, std::string path, std::string message) {
  return add({std::move(code), Severity::Error, std::move(loc), std::move(path), std::move(message), {}, {}, {}});
}

Diagnostic& DiagSink::warning(std::string code, util::SourceLoc loc, std::string path, std::string message) {
  return add({std::move(code), Severity::Warning, std::move(loc), std::move(path), std::move(message), {}, {}, {}});
}

Diagnostic& DiagSink::note(std::string code, util::SourceLoc loc, std::string path, std::string message) {
  return add({std::move(code), Severity::Note, std::move(loc), std::move(path), std::move(message), {}, {}, {}});
}

size_t DiagSink::error_count() const {
  return static_cast<size_t>(std::count_if(items_.begin(), items_.end(),
                                           [](const Diagnostic& d) { return d.severity == Severity::Error; }));
}

size_t DiagSink::warning_count() const {
  return static_cast<size_t>(std::count_if(items_.begin(), items_.end(),
                                           [](const Diagnostic& d) { return d.severity == Severity::Warning; }));
}

void DiagSink::sort() {
  std::stable_sort(items_.begin(), items_.end(), [](const Diagnostic& a, const Diagnostic& b) {
    if (a.code == "Q999" || b.code == "Q999") return b.code == "Q999" && a.code != "Q999";
    return std::tie(a.loc.file, a.loc.line, a.loc.col, a.code) <
           std::tie(b.loc.file, b.loc.line, b.loc.col, b.code);
  });
}

}  // namespace qpo::diag
