#include "exec/exchange.h"

namespace qpo::exec {

void Directory::merge(const Directory& other) {
  for (const auto& [k, v] : other.qps) qps[k] = v;
  for (const auto& [k, v] : other.mrs) mrs[k] = v;
}

bool InProcessChannel::arrive(bool ok, const Directory* mine, Directory* all, const std::string& meeting,
                              const std::string* note, std::vector<std::string>* notes) {
  std::unique_lock lock(mu_);
  uint64_t gen = generation_;
  // Hosts at different meetings (or one at a stage barrier) are out of step: all fail.
  if (arrived_ == 0) meeting_ = meeting;
  else if (meeting_ != meeting) ok = false;
  all_ok_ = all_ok_ && ok;
  if (mine) pending_.merge(*mine);
  if (note) pending_notes_.push_back(*note);
  if (++arrived_ == hosts_) {
    last_ok_ = all_ok_;
    last_dir_ = pending_;
    pending_ = {};
    last_notes_ = std::move(pending_notes_);
    pending_notes_.clear();
    arrived_ = 0;
    all_ok_ = true;
    ++generation_;
    cv_.notify_all();
  } else {
    cv_.wait(lock, [&] { return generation_ != gen; });
  }
  if (all) *all = last_dir_;
  if (notes) *notes = last_notes_;
  return last_ok_;
}

bool InProcessChannel::exchange(const Directory& mine, bool ok, Directory* all) { return arrive(ok, &mine, all); }

bool InProcessChannel::barrier(const std::string&, bool ok) { return arrive(ok, nullptr, nullptr); }

}  // namespace qpo::exec

namespace qpo::exec {

bool InProcessChannel::gather(const std::string& name, const std::string& note, std::vector<std::string>* notes) {
  return arrive(true, nullptr, nullptr, "gather " + name, &note, notes);
}

}  // namespace qpo::exec
