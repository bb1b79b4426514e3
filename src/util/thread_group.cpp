#include "util/thread_group.h"

#include <system_error>

namespace qpo::util {

std::optional<std::string> ThreadGroup::start(std::function<void()> body) {
  auto guarded = [this, body = std::move(body)] {
    try {
      body();
    } catch (const std::exception& e) {
      keep(e.what());
    } catch (...) {
      keep("an exception that is not a std::exception");
    }
  };
  try {
    threads_.reserve(threads_.size() + 1);  // what can fail before the thread exists
    threads_.emplace_back(std::move(guarded));
  } catch (const std::system_error& e) {
    return std::string("cannot start a thread: ") + e.what();
  } catch (const std::bad_alloc&) {
    return std::string("cannot start a thread: out of memory");
  }
  return std::nullopt;
}

void ThreadGroup::keep(const char* why) noexcept {
  try {  // copying the message may itself fail (bad_alloc): nothing may leave the thread
    std::lock_guard lock(m_);
    if (escaped_.empty()) escaped_ = why;
  } catch (...) {
  }
}

void ThreadGroup::join() {
  for (auto& t : threads_)
    if (t.joinable()) t.join();
}

std::string ThreadGroup::escaped() const {
  std::lock_guard lock(m_);
  return escaped_;
}

}  // namespace qpo::util
