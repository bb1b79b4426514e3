#pragma once
// A report line that is no verb's timed outcome: an abort, an agent lost, a link restored, a
// fault removed.
#include <string>
#include <utility>

#include "report/run_report.h"

namespace qpo::report {

inline StepResult step_line(std::string host, std::string phase, std::string verb, std::string object,
                            StepStatus status, std::string message) {
  StepResult r;
  r.host = std::move(host);
  r.phase = std::move(phase);
  r.verb = std::move(verb);
  r.object = std::move(object);
  r.status = status;
  r.message = std::move(message);
  return r;
}

// The same with the line's detail ("dev eth0 up").
inline StepResult step_line(std::string host, std::string phase, std::string verb, std::string object,
                            std::string detail, StepStatus status, std::string message) {
  StepResult r =
      step_line(std::move(host), std::move(phase), std::move(verb), std::move(object), status, std::move(message));
  r.detail = std::move(detail);
  return r;
}

}  // namespace qpo::report
