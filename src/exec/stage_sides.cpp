#include "exec/stage_sides.h"

#include <chrono>
#include <thread>

#include "dataplane/error.h"
#include "exec/executor.h"

namespace qpo::exec {

namespace {

// Runs fn() and keeps what stopped it.
void guarded(std::string& error, bool& timed_out, const std::function<void()>& fn) {
  try {
    fn();
  } catch (const dataplane::DataplaneError& e) {
    error = e.what();
    timed_out = e.kind() == dataplane::DataplaneError::Kind::Timeout;
  } catch (const std::exception& e) {
    error = e.what();
  } catch (...) {
    error = "an exception that is not a std::exception";
  }
}

}  // namespace

std::optional<std::string> StageSides::launch(std::function<void()> body) {
  // Made before it is counted (it allocates): a side that never exists is never waited for.
  std::function<void()> thread = [this, body = std::move(body)] {
    struct Ended {
      std::atomic<size_t>& running;
      ~Ended() { --running; }  // also when `body` throws (ThreadGroup keeps the message)
    } ended{running_};
    body();
  };
  ++running_;
  std::optional<std::string> not_started;
  try {
    std::lock_guard lock(start_m_);
    not_started = threads_.start(std::move(thread));
  } catch (...) {
    --running_;
    throw;
  }
  if (not_started) --running_;
  return not_started;
}

bool StageSides::start(std::string& error, bool& timed_out, std::function<void()> fn) {
  auto not_started = launch([this, &error, &timed_out, fn = std::move(fn)] {
    guarded(error, timed_out, fn);
    if (!error.empty()) halt_ = true;
  });
  if (!not_started) return true;
  error = *not_started;  // this side's line says why; the others stop
  halt_ = true;
  return false;
}

std::optional<std::string> StageSides::start_worker(std::function<void()> body) { return launch(std::move(body)); }

std::string StageSides::halted_by() const {
  if (stop_requested()) return "interrupted (SIGINT)";
  if (told_to_stop()) return told_->why;
  return kStageSideFailed;
}

void StageSides::relay() {
  bool interrupted = stop_requested();  // SIGINT reaches the scripts' workers on its own (lua::Callbacks::stop)
  if (interrupted || told_to_stop()) halt_ = true;
  if (halt_ && !interrupted && !cancel_scripts_.load(std::memory_order_relaxed)) {
    try {  // wait() runs in the destructor too: nothing may leave it
      cancel_why_ = halted_by();
    } catch (...) {
    }
    cancel_scripts_.store(true, std::memory_order_release);
  }
}

void StageSides::wait() {
  for (;;) {
    bool last = running_ == 0;
    relay();  // once more after the last side ended: the stage's state says how it ended
    if (last) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  join();
}

void StageSides::join() {
  std::lock_guard lock(start_m_);
  threads_.join();
}

}  // namespace qpo::exec
