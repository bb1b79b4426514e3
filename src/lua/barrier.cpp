#include "lua/barrier.h"

#include <chrono>
#include <stdexcept>

namespace qpo::lua {

void Barrier::arrive_and_wait(const std::string& tag, const std::function<void()>& leader, int timeout_ms,
                              const std::function<bool()>& progressed) {
  std::unique_lock lock(m_);
  if (!broken_.empty()) throw std::runtime_error("barrier '" + tag + "' is broken: " + broken_);
  uint64_t gen = generation_;
  if (++arrived_ >= parties_) {
    // The leader's cross-host wait runs with the lock released: others stay blocked on the
    // generation, and a break from another thread can still get in.
    leader_busy_ = true;
    lock.unlock();
    std::string failure;
    try {
      if (leader) leader();
    } catch (const std::exception& e) {
      failure = e.what();
    }
    lock.lock();
    leader_busy_ = false;
    if (!failure.empty()) {
      broken_ = "cross-host barrier failed: " + failure;
      cv_.notify_all();
      throw std::runtime_error("barrier '" + tag + "': " + broken_);
    }
    arrived_ = 0;
    ++generation_;
    cv_.notify_all();
    return;
  }
  auto released = [&] { return generation_ != gen || !broken_.empty(); };
  if (timeout_ms < 0) {
    cv_.wait(lock, released);
  } else {
    while (!cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms), released)) {
      bool moved = progressed && progressed();
      // Everyone here arrived, and the leader is waiting for the other hosts: that wait has
      // its own limit (the phase timeout) and breaks or releases this barrier when it ends.
      if (moved || leader_busy_) continue;
      --arrived_;
      throw std::runtime_error("barrier '" + tag + "': the other workers did not arrive within " +
                               std::to_string(timeout_ms) + " ms" +
                               (progressed ? ", and no stream of this workload completed work in that time" : ""));
    }
  }
  // Broken wins over a release that raced with it (the failed worker's drop() completes the
  // count): the others must learn that a worker failed.
  if (!broken_.empty()) throw std::runtime_error("barrier '" + tag + "' is broken: " + broken_);
}

void Barrier::drop() {
  std::lock_guard lock(m_);
  --parties_;
  if (parties_ > 0 && arrived_ >= parties_) {
    arrived_ = 0;
    ++generation_;
    cv_.notify_all();
  }
}

void Barrier::break_barrier(const std::string& why) {
  std::lock_guard lock(m_);
  if (broken_.empty()) broken_ = why;
  cv_.notify_all();
}

}  // namespace qpo::lua
