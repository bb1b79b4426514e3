#pragma once
// The threads of one timeline stage's workloads, as one set: every op workload's initiator
// threads and receive streams, every stock tool's conversation, the scripts' conductor (which
// runs each script's setup(), meetings and report() in plan order) and every script worker.
// Each is started here; one that fails, or cannot start, halts the others; Ctrl-C, or the
// other hosts' stop request, halts them all; wait() returns when every one has ended, and all
// are joined once. A halt reaches the op streams through halt_flag() and the script workers
// through scripts_cancel() (with its words in scripts_cancel_why()).
#include <atomic>
#include <functional>
#include <mutex>
#include <optional>
#include <string>

#include "exec/exchange.h"
#include "util/thread_group.h"

namespace qpo::exec {

// The words a script's workers are stopped with when another side of their stage failed.
inline constexpr const char* kStageSideFailed = "another workload of this stage failed";

class StageSides {
 public:
  // `told`: this host's stop request (the channel's), or nullptr.
  explicit StageSides(const StopRequest* told) : told_(told) {}
  ~StageSides() {  // wait() was not called: nothing may outlive the stage
    halt_ = true;
    wait();
  }
  StageSides(const StageSides&) = delete;
  StageSides& operator=(const StageSides&) = delete;

  // A side: `fn` on a thread of its own. What it throws is kept in `error` (`timed_out`: a data
  // path timeout), and halts the stage. When no thread can be started, `error` says why, the
  // stage halts, and false comes back.
  bool start(std::string& error, bool& timed_out, std::function<void()> fn);
  // A script worker (lua::Callbacks::start): `body` never throws and reports its own failure
  // to its workload, which halts the stage when it fails. Why it could not start, or nullopt.
  // Safe from any side's thread (the conductor starts its scripts' workers).
  std::optional<std::string> start_worker(std::function<void()> body);

  // Relays Ctrl-C and the stop request (and a side's failure) to every side until all have
  // ended; then joins them. Call it from the thread that started the sides, once they all are.
  void wait();

  void halt() { halt_ = true; }
  bool halted() const { return halt_; }
  const std::atomic<bool>* halt_flag() const { return &halt_; }
  // Set, after scripts_cancel_why(), when the stage halted: the script workers stop at once.
  const std::atomic<bool>* scripts_cancel() const { return &cancel_scripts_; }
  const std::string* scripts_cancel_why() const { return &cancel_why_; }
  // Why the stage halted, in the words a script's workers are stopped with.
  std::string halted_by() const;
  bool told_to_stop() const { return told_ && told_->requested.load(std::memory_order_acquire); }

 private:
  std::optional<std::string> launch(std::function<void()> body);
  void relay();  // Ctrl-C and the stop request halt the stage; a halt (not Ctrl-C) cancels the scripts
  void join();

  const StopRequest* told_;
  std::atomic<bool> halt_{false};
  std::atomic<bool> cancel_scripts_{false};
  std::string cancel_why_;
  std::atomic<size_t> running_{0};
  std::mutex start_m_;  // ThreadGroup::start from the session's thread and the conductor's
  util::ThreadGroup threads_;  // last: its threads use the members above
};

}  // namespace qpo::exec
