#include "exec/exchange.h"

namespace qpo::exec {

void Directory::merge(const Directory& other) {
  for (const auto& [k, v] : other.qps) qps[k] = v;
  for (const auto& [k, v] : other.mrs) mrs[k] = v;
}

bool InProcessChannel::arrive(bool ok, const Directory* mine, Directory* all) {
  std::unique_lock lock(mu_);
  uint64_t gen = generation_;
  all_ok_ = all_ok_ && ok;
  if (mine) pending_.merge(*mine);
  if (++arrived_ == hosts_) {
    last_ok_ = all_ok_;
    last_dir_ = pending_;
    pending_ = {};
    arrived_ = 0;
    all_ok_ = true;
    ++generation_;
    cv_.notify_all();
  } else {
    cv_.wait(lock, [&] { return generation_ != gen; });
  }
  if (all) *all = last_dir_;
  return last_ok_;
}

bool InProcessChannel::exchange(const Directory& mine, bool ok, Directory* all) { return arrive(ok, &mine, all); }

bool InProcessChannel::barrier(const std::string&, bool ok) { return arrive(ok, nullptr, nullptr); }

}  // namespace qpo::exec
