#pragma once
// Report lines from the bring-up window, written after it closes. Inside the window a step
// leaves only its outcome (status, errno, microseconds, a message when something went
// wrong) in a small entry; the report's StepResults - six strings each, the host, verb,
// object and mask text the same for thousands of QPs - are made by name_all() once the last
// QP is up, at the positions the steps had, between the lines other steps added directly.
#include <cstddef>
#include <string>
#include <vector>

#include "exec/run_state.h"
#include "plan/plan.h"

namespace qpo::exec {

// How one step ended, before it becomes a report line.
struct Outcome {
  report::StepStatus status = report::StepStatus::Ok;
  int err = 0;
  double micros = 0;
  std::string message;
};

class DeferredLines {
 public:
  // Room for n entries, touched now: first-touch page faults belong before the window.
  void reserve(size_t n);
  // Each entry sits where the report had `st.report.steps.size()` lines when it was made.
  void created(const RunState& st, const plan::Step& step, Outcome o) { add(st, Kind::Created, &step, nullptr, 0, std::move(o)); }
  void granted(const RunState& st, const QpState& q) { add(st, Kind::Granted, nullptr, &q, 0, {report::StepStatus::Info}); }
  void modified(const RunState& st, const QpState& q, size_t transition, Outcome o) {
    add(st, Kind::Modified, nullptr, &q, transition, std::move(o));
  }
  size_t size() const { return entries_.size(); }
  // Puts every entry into st.report.steps as a named line. Call once the window has closed.
  void name_all(RunState& st);

 private:
  enum class Kind : unsigned char { Created, Granted, Modified };
  struct Entry {
    size_t position;
    Kind kind;
    const plan::Step* step;
    const QpState* qp;
    size_t transition;
    Outcome outcome;
  };
  void add(const RunState& st, Kind kind, const plan::Step* step, const QpState* qp, size_t transition, Outcome o) {
    entries_.push_back({st.report.steps.size(), kind, step, qp, transition, std::move(o)});
  }
  std::vector<Entry> entries_;
};

// "max_send_wr 16 -> 31, max_inline_data 0 -> 64": what the device granted beyond the request
// ("" when it granted exactly what was asked).
std::string granted_text(const ibv_qp_cap& asked, const ibv_qp_cap& granted);

// Fills a bring-up ibv_modify_qp line's host, phase, verb, object and mask text.
void name_modify_line(RunState& st, report::StepResult& r, const QpState& q, const scenario::Transition& t,
                      const std::string& phase);

}  // namespace qpo::exec
