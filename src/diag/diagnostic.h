#pragma once
// A Diagnostic is a finding about the user's input (exit 1), as opposed to a system failure
// (exit 2). Passes collect them into a DiagSink; rendering is separate (render.h), and tests
// check the structure (code, location, path), not the prose.
#include <string>
#include <vector>

#include "util/source_text.h"

namespace qpo::diag {

enum class Severity { Error, Warning, Note };
const char* severity_name(Severity s);

struct Related {
  util::SourceLoc loc;
  std::string label;  // "peer QP declared here"
};

struct Diagnostic {
  std::string code;       // stable: "Q302"
  Severity severity = Severity::Error;
  util::SourceLoc loc;
  std::string path;       // YAML path: "qps.qa.states.RTR.min_rnr_timer"
  std::string message;    // one line: what is wrong
  std::string rule;       // which rule: "kernel qp_state_table: RC INIT->RTR required"
  std::string hint;       // how to fix it
  std::vector<Related> related;
};

class DiagSink {
 public:
  Diagnostic& add(Diagnostic d);
  Diagnostic& error(std::string code, util::SourceLoc loc, std::string path, std::string message);
  Diagnostic& warning(std::string code, util::SourceLoc loc, std::string path, std::string message);
  Diagnostic& note(std::string code, util::SourceLoc loc, std::string path, std::string message);

  const std::vector<Diagnostic>& all() const { return items_; }
  size_t error_count() const;
  size_t warning_count() const;
  bool has_errors() const { return error_count() > 0; }
  // Stable order for output: by file, line, column, then code.
  void sort();
  // A runaway input (1e6 broken QPs) must not produce 1e6 lines; past the cap, count only.
  void set_cap(size_t cap) { cap_ = cap; }
  size_t dropped() const { return dropped_; }

 private:
  std::vector<Diagnostic> items_;
  size_t cap_ = 1000;
  size_t dropped_ = 0;
};

}  // namespace qpo::diag
