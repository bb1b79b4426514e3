#include "report/live_log.h"

#include <algorithm>
#include <utility>

namespace qpo::report {

LiveLog::LiveLog(std::vector<std::string> hosts, Print print)
    : hosts_(std::move(hosts)), queued_(hosts_.size()), done_(hosts_.size(), false), print_(std::move(print)) {}

size_t LiveLog::index_of(const std::string& host) const {
  return static_cast<size_t>(std::find(hosts_.begin(), hosts_.end(), host) - hosts_.begin());
}

void LiveLog::print(const StepResult& s) noexcept {
  try {
    print_(s);
  } catch (...) {  // out of memory for a line, or an output stream set to throw: the JSON keeps it
  }
}

void LiveLog::lines(const std::string& host, const std::vector<StepResult>& steps, size_t from, size_t to) noexcept {
  std::lock_guard lock(m_);
  size_t i = index_of(host);
  to = std::min(to, steps.size());
  for (size_t k = from; k < to; ++k) {
    if (i == current_ || i >= hosts_.size()) {
      print(steps[k]);
      continue;
    }
    try {
      queued_[i].push_back(steps[k]);
    } catch (...) {
    }
  }
}

void LiveLog::host_done(const std::string& host) noexcept {
  std::lock_guard lock(m_);
  size_t i = index_of(host);
  if (i >= hosts_.size()) return;
  done_[i] = true;
  while (current_ < hosts_.size() && done_[current_]) {
    ++current_;
    if (current_ == hosts_.size()) break;
    for (const auto& s : queued_[current_]) print(s);
    queued_[current_].clear();
  }
}

}  // namespace qpo::report
