#pragma once
// Report lines from the bring-up window, written after it closes. Inside the window a step
// leaves only its outcome (status, errno, microseconds, a message when something went
// wrong) in a small entry; the report's StepResults - six strings each, the host, verb,
// object and mask text the same for thousands of QPs - are made by name_all() once the last
// QP is up, each added to its plan step's place in the report (RunReport::add).
#include <cstddef>
#include <string>
#include <vector>

#include "exec/run_state.h"
#include "exec/steps.h"
#include "plan/plan.h"

namespace qpo::exec {

class DeferredLines {
 public:
  // Room for n entries, touched now: first-touch page faults belong before the window.
  void reserve(size_t n);
  void created(const report::RunReport& log, const plan::Step& step, Outcome&& o) { add(log, Kind::Created, &step, nullptr, nullptr, std::move(o)); }
  void granted(const report::RunReport& log, const QpState& q) {
    add(log, Kind::Granted, nullptr, &q, nullptr, Outcome{report::StepStatus::Info, 0, 0, {}});
  }
  void modified(const report::RunReport& log, const QpState& q, const plan::ModifyPlan& m, Outcome&& o) {
    add(log, Kind::Modified, nullptr, &q, &m, std::move(o));
  }
  // The window's common cases: a step that went as planned, with no Outcome (and no string)
  // made for it.
  void created_ok(const report::RunReport&, const plan::Step& step, double micros) {
    entries_.push_back({&step, nullptr, micros, 0, kNoMessage, Kind::Created, report::StepStatus::Ok, step.index});
  }
  void modified_ok(const report::RunReport& log, const QpState& q, const plan::ModifyPlan& m, double micros) {
    entries_.push_back({&q, &m, micros, 0, kNoMessage, Kind::Modified, report::StepStatus::Ok, log.current_step});
  }
  size_t size() const { return entries_.size(); }
  // The highest plan step an entry reports on (0: none): an abort taken before name_all
  // reports on it, so it comes after these lines.
  int latest_step() const;
  // Adds every entry to log as a named line, and forgets them. Call once the window has closed.
  void name_all(RunState& st, report::RunReport& log);

 private:
  enum class Kind : unsigned char { Created, Granted, Modified };
  // Small and string-free: thousands are made inside the window. Messages (failures,
  // warnings) are rare and live in messages_.
  static constexpr uint32_t kNoMessage = ~0u;
  struct Entry {
    const void* what;        // the plan::Step (Created) or the QpState (Granted, Modified)
    const plan::ModifyPlan* modify;  // Modified: the lowered transition
    double micros;
    int err;
    uint32_t message;        // index into messages_, or kNoMessage
    Kind kind;
    report::StepStatus status;
    int plan_step;           // the plan step the line reports on
  };
  void add(const report::RunReport& log, Kind kind, const plan::Step* step, const QpState* qp, const plan::ModifyPlan* m, Outcome&& o) {
    uint32_t message = kNoMessage;
    if (!o.message.empty()) {
      message = static_cast<uint32_t>(messages_.size());
      messages_.push_back(std::move(o.message));
    }
    entries_.push_back({step ? static_cast<const void*>(step) : qp, m, o.micros, o.err, message, kind, o.status,
                        step ? step->index : log.current_step});
  }
  std::vector<Entry> entries_;
  std::vector<std::string> messages_;
};

// "max_send_wr 16 -> 31, max_inline_data 0 -> 64": what the device granted beyond the request
// ("" when it granted exactly what was asked).
std::string granted_text(const ibv_qp_cap& asked, const ibv_qp_cap& granted);
// Whether granted_text would be empty, without building it (checked per QP in the window).
inline bool same_caps(const ibv_qp_cap& a, const ibv_qp_cap& b) {
  return a.max_send_wr == b.max_send_wr && a.max_recv_wr == b.max_recv_wr && a.max_send_sge == b.max_send_sge &&
         a.max_recv_sge == b.max_recv_sge && a.max_inline_data == b.max_inline_data;
}

// Fills a bring-up ibv_modify_qp line's host, phase, verb, object and mask text.
void name_modify_line(RunState& st, report::StepResult& r, const QpState& q, const plan::ModifyPlan& t,
                      const std::string& phase);

}  // namespace qpo::exec
