#include "exec/exchange.h"

namespace qpo::exec {

void Directory::merge(Directory&& other) {
  // std::map::merge splices the nodes over; what stays behind names an entry we already have.
  qps.merge(other.qps);
  mrs.merge(other.mrs);
  for (auto& [k, v] : other.qps) qps[k] = std::move(v);
  for (auto& [k, v] : other.mrs) mrs[k] = std::move(v);
  other = {};
}

bool InProcessChannel::arrive(bool ok, Directory* mine, Directory* all, const std::string& meeting,
                              const std::string* note, std::vector<std::string>* notes) {
  std::unique_lock lock(mu_);
  uint64_t gen = generation_;
  // Hosts at different meetings (or one at a stage barrier) are out of step: all fail.
  if (arrived_ == 0) meeting_ = meeting;
  else if (meeting_ != meeting) ok = false;
  all_ok_ = all_ok_ && ok;
  if (mine) pending_.merge(std::move(*mine));
  if (note) pending_notes_.push_back(*note);
  if (++arrived_ == hosts_) {
    last_ok_ = all_ok_;
    last_dir_ = std::move(pending_);
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

bool InProcessChannel::exchange(Directory mine, bool ok, Directory* all) {
  if (hosts_ == 1) {  // nobody to wait for or out of step with: the directory is ours
    if (all) *all = std::move(mine);
    return ok;
  }
  return arrive(ok, &mine, all);
}

bool InProcessChannel::barrier(const std::string&, bool ok) { return arrive(ok, nullptr, nullptr); }

}  // namespace qpo::exec

namespace qpo::exec {

bool InProcessChannel::gather(const std::string& name, const std::string& note, std::vector<std::string>* notes) {
  return arrive(true, nullptr, nullptr, "gather " + name, &note, notes);
}

}  // namespace qpo::exec
