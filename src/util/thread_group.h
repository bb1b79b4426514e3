#pragma once
// Threads that never let an exception out, and never leave one unjoined.
//
// std::thread has two ways to end the process: an exception that leaves the thread's body
// (std::terminate: CI once went red on "terminate called" from a test's worker), and a joinable
// std::thread destroyed while the code that made it unwinds (as when the next thread cannot
// be started: std::system_error under a pids or memory limit). A ThreadGroup runs each body
// under a catch that keeps the message, reports a thread it cannot start instead of throwing,
// and joins every thread it started when it goes, on error paths too.
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace qpo::util {

class ThreadGroup {
 public:
  ThreadGroup() = default;
  ThreadGroup(const ThreadGroup&) = delete;
  ThreadGroup& operator=(const ThreadGroup&) = delete;
  ~ThreadGroup() { join(); }

  // Runs `body` on a new thread. Returns why no thread could be started (then `body` did not
  // run and the caller accounts for it), or nullopt. What escapes `body` is kept (escaped()).
  std::optional<std::string> start(std::function<void()> body);
  // Waits for every thread started so far.
  void join();
  // The first message an exception carried out of a body, "" when none did. Bodies should
  // catch what they expect; this is the backstop that keeps the process alive.
  std::string escaped() const;

 private:
  void keep(const char* why) noexcept;  // the first escaped message, without throwing

  std::vector<std::thread> threads_;
  mutable std::mutex m_;
  std::string escaped_;
};

}  // namespace qpo::util
