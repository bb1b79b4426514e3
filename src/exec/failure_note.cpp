#include "exec/failure_note.h"

#include <algorithm>

#include "report/step_line.h"

namespace qpo::exec {

bool is_echo(const std::string& reason) {
  // Also behind a prefix: a merged report says "host a: aborted: ...".
  return reason.find("aborted: host ") != std::string::npos || reason.find("another host failed") != std::string::npos;
}

namespace {
constexpr const char* kStoppedWhileWaiting = "stopped while waiting for ";
}  // namespace

std::string stopped_while_waiting(const std::string& what) { return kStoppedWhileWaiting + what; }

bool cut_short_by_stop(const std::string& reason) { return reason.find(kStoppedWhileWaiting) != std::string::npos; }

void take_abort(report::RunReport& r, const std::string& host, const std::string& why, int latest) {
  // The abort comes after every line so far: it reports on the latest plan step, which may be
  // a barrier's (its line names its step without making it the current one).
  auto line = report::step_line(host, "abort", "abort", host, report::StepStatus::Failed, why);
  line.plan_step = std::max({r.current_step, r.latest_step(), latest});
  line.closes_step = true;
  r.add(std::move(line));
  if (r.verdict == report::Verdict::Pass || (r.verdict == report::Verdict::Fail && cut_short_by_stop(r.reason))) {
    r.verdict = report::Verdict::Fail;
    r.reason = why + "; tore down";
  }
}

std::string failure_note(const report::RunReport& r, const std::string& host) {
  if (r.verdict == report::Verdict::Pass || is_echo(r.reason)) return "";
  const report::StepResult* line = nullptr;
  for (const auto& s : r.steps)
    if (s.status == report::StepStatus::Failed) {
      line = &s;
      break;
    }
  // A capability skip is not a failure: the others read "host b stopped: unsupported by ...".
  std::string out = "host " + host + (r.verdict == report::Verdict::Unsupported ? " stopped" : " failed");
  if (!line) return out + ": " + r.reason;
  if (line->plan_step) out += " at step " + std::to_string(line->plan_step);
  out += " (" + line->verb + (line->object.empty() ? "" : ", " + line->object) + "): ";
  return out + (line->message.empty() ? r.reason : line->message);
}

}  // namespace qpo::exec
