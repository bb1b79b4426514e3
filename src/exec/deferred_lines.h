#pragma once
// Report lines from the bring-up window, named after it closes. Inside the window a line
// holds only its outcome (status, errno, microseconds, a message when something went wrong);
// the host, verb, object and mask text - the same few strings copied for every one of
// thousands of QPs - are written by name_all() once the last QP is up. Lines are appended in
// order, so the report reads exactly as if each had been named on the spot.
#include <cstddef>
#include <vector>

#include "exec/run_state.h"
#include "plan/plan.h"

namespace qpo::exec {

class DeferredLines {
 public:
  void reserve(size_t n) { entries_.reserve(n); }
  void created(size_t line, const plan::Step& step) { entries_.push_back({line, Kind::Created, &step, nullptr, 0}); }
  void granted(size_t line, const QpState& q) { entries_.push_back({line, Kind::Granted, nullptr, &q, 0}); }
  void modified(size_t line, const QpState& q, size_t transition) {
    entries_.push_back({line, Kind::Modified, nullptr, &q, transition});
  }
  // Writes the names into st.report.steps. Call once the window has closed and before any
  // line is inserted in the middle of the report (the entries hold line indexes).
  void name_all(RunState& st);

 private:
  enum class Kind : unsigned char { Created, Granted, Modified };
  struct Entry {
    size_t line;
    Kind kind;
    const plan::Step* step;
    const QpState* qp;
    size_t transition;
  };
  std::vector<Entry> entries_;
};

// "max_send_wr 16 -> 31, max_inline_data 0 -> 64": what the device granted beyond the request
// ("" when it granted exactly what was asked).
std::string granted_text(const ibv_qp_cap& asked, const ibv_qp_cap& granted);

// Fills a bring-up ibv_modify_qp line's host, phase, verb, object and mask text.
void name_modify_line(RunState& st, report::StepResult& r, const QpState& q, const scenario::Transition& t,
                      const std::string& phase);

}  // namespace qpo::exec
