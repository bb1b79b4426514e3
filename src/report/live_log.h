#pragma once
// The run log as the run goes: each host hands over its report lines once they are final (exec's
// HostSession does at the end of the bring-up and of every stage), and they are printed at once,
// in the order the final report lists them: the first host's lines as they come, another
// host's as soon as every host before it has finished (the report groups lines by host).
// A crash or a Ctrl-C then leaves every line already printed.
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "report/run_report.h"

namespace qpo::report {

// Where a host's final lines go as the run goes: a terminal (LiveLog), or the controller an
// agent reports to (cluster/agent.cpp). Both calls are thread-safe and never throw.
class LineSink {
 public:
  virtual ~LineSink() = default;
  // steps[from, to) of `host` are final.
  virtual void lines(const std::string& host, const std::vector<StepResult>& steps, size_t from, size_t to) noexcept = 0;
  // `host` has no more lines.
  virtual void host_done(const std::string& host) noexcept = 0;
};

class LiveLog : public LineSink {
 public:
  using Print = std::function<void(const StepResult&)>;
  // `hosts` in the report's order; `print` is called under a lock, one line at a time.
  LiveLog(std::vector<std::string> hosts, Print print);

  // steps[from, to) of `host` are final. Thread-safe; never throws (a line that cannot be
  // printed is still in the report's JSON).
  void lines(const std::string& host, const std::vector<StepResult>& steps, size_t from, size_t to) noexcept override;
  // `host` has no more lines: the next host's queued lines follow.
  void host_done(const std::string& host) noexcept override;

 private:
  size_t index_of(const std::string& host) const;
  void print(const StepResult& s) noexcept;

  std::mutex m_;
  std::vector<std::string> hosts_;
  std::vector<std::vector<StepResult>> queued_;  // per host, until its turn
  std::vector<bool> done_;
  size_t current_ = 0;  // the host whose lines print as they come
  Print print_;
};

}  // namespace qpo::report
