#pragma once
// A live progress line for long script workloads: on a terminal, one line on stderr with the
// rate so far per worker, rewritten in place about once a second (the data path reports
// through lua::Callbacks::progress). When the stream is not a terminal (a pipe, a file, CI,
// the lab's console) nothing is ever written, so logs and --format json stay clean.
#include <chrono>
#include <map>
#include <mutex>
#include <string>

#include "dataplane/stream.h"

namespace qpo::exec {

class ProgressLine {
 public:
  // Draws on `fd` only when isatty(fd). `label` starts the line (the workload's name).
  ProgressLine(int fd, std::string label);
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  bool live() const { return live_; }
  // From any worker thread; redraws at most every 0.5 s.
  void update(const std::string& worker, const dataplane::StreamProgress& p);
  // A log line from a script: printed above the progress line (to `fd` in any case).
  void log(const std::string& line);
  // Erases the line (before the report is printed).
  void finish();

 private:
  std::string render() const;
  void draw_locked();
  void erase_locked();

  int fd_;
  std::string label_;
  bool live_;
  std::mutex m_;
  std::map<std::string, dataplane::StreamProgress> latest_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point last_draw_{};
};

}  // namespace qpo::exec
