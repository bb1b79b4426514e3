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

// Host i of a channel with named hosts: the same rounds, with its name on its arrivals.
class InProcessChannel::Member : public Channel {
 public:
  Member(InProcessChannel& ch, int i) : ch_(ch), i_(i) {}
  bool exchange(Directory mine, bool ok, Directory* all) override {
    if (ch_.hosts_ == 1) return ch_.exchange(std::move(mine), ok, all);
    return ch_.arrive(i_, "exchange", ok, &mine, all);
  }
  bool barrier(const std::string& name, bool ok) override { return ch_.arrive(i_, "stage " + name, ok, nullptr, nullptr); }
  bool gather(const std::string& name, const std::string& note, std::vector<std::string>* notes) override {
    return ch_.arrive(i_, "workload " + name, true, nullptr, nullptr, "gather " + name, &note, notes);
  }
  bool signals(const std::string& workload, const std::map<std::string, int64_t>& add,
               std::map<std::string, int64_t>* totals) override {
    return ch_.signals(workload, add, totals);
  }
  std::string failure() const override { return ch_.failure(); }
  void note_failure(const std::string& note) override { ch_.abort_others(i_, note); }
  const StopRequest* stop_request() const override { return ch_.stops_[static_cast<size_t>(i_)].get(); }

 private:
  InProcessChannel& ch_;
  int i_;
};

namespace {

// What a host is doing once it passed a round (the agents' controller says it alike).
std::string phase_after(const std::string& stage) {
  if (stage == "exchange") return "bring-up (after the exchange)";
  if (stage.rfind("workload ", 0) == 0) return "workload '" + stage.substr(9) + "' (after a round of its meeting)";
  return "the stage after '" + stage.substr(6) + "'";  // "stage NAME"
}

std::string duration_text(std::chrono::milliseconds t) {
  if (t.count() % 1000 == 0) return std::to_string(t.count() / 1000) + " s";
  return std::to_string(t.count()) + " ms";
}

}  // namespace

InProcessChannel::InProcessChannel(int hosts) : hosts_(hosts) {}

InProcessChannel::InProcessChannel(std::vector<std::string> hosts, std::chrono::milliseconds phase_timeout)
    : hosts_(static_cast<int>(hosts.size())), names_(std::move(hosts)), timeout_(phase_timeout),
      round_start_(std::chrono::steady_clock::now()), here_(names_.size(), false), phase_(names_.size(), "setup") {
  for (size_t i = 0; i < names_.size(); ++i) {
    members_.push_back(std::make_unique<Member>(*this, static_cast<int>(i)));
    stops_.push_back(std::make_unique<StopRequest>());
  }
}

InProcessChannel::~InProcessChannel() = default;

Channel& InProcessChannel::member(size_t i) { return *members_.at(i); }

std::string InProcessChannel::failure() const {
  std::lock_guard lock(mu_);
  return failure_.empty() ? first_note_ : failure_;
}

// Like the agents' controller (cluster/controller.cpp, abort_others): the hosts waiting at
// the round learn it from the round's answer (failure()); the others are stopped now.
void InProcessChannel::abort_others(int who, const std::string& note) {
  if (note.empty()) return;
  std::lock_guard lock(mu_);
  if (!first_note_.empty()) return;  // the first failure is the cause; later ones follow it
  first_note_ = note;
  for (size_t i = 0; i < stops_.size(); ++i) {
    if (static_cast<int>(i) == who || here_[i] || stops_[i]->requested.load(std::memory_order_acquire)) continue;
    stops_[i]->why = "aborted: " + note;
    stops_[i]->requested.store(true, std::memory_order_release);
  }
}

void InProcessChannel::expire_locked() {
  if (!failure_.empty() || arrived_ == hosts_) return;
  std::string late = "no answer within " + duration_text(timeout_) + " during ";
  for (size_t i = 0; i < names_.size(); ++i) {
    if (here_[i]) continue;
    failure_ += (failure_.empty() ? "" : "; ") + std::string("host ") + names_[i] + ": " + late + phase_[i];
    if (stops_[i]->requested.load(std::memory_order_acquire)) continue;  // `why` is written once
    stops_[i]->why = "stopped: " + late + phase_[i] + " (--phase-timeout)";
    stops_[i]->requested.store(true, std::memory_order_release);
  }
  cv_.notify_all();
}

void InProcessChannel::check_deadline() {
  std::lock_guard lock(mu_);
  if (timeout_.count() > 0 && std::chrono::steady_clock::now() >= round_start_ + timeout_) expire_locked();
}

bool InProcessChannel::arrive(int who, const std::string& stage, bool ok, Directory* mine, Directory* all,
                              const std::string& meeting, const std::string* note, std::vector<std::string>* notes) {
  std::unique_lock lock(mu_);
  if (!failure_.empty()) return false;  // a round failed for lateness: the run is over
  uint64_t gen = generation_;
  // Hosts at different meetings (or one at a stage barrier) are out of step: all fail.
  if (arrived_ == 0) meeting_ = meeting;
  else if (meeting_ != meeting) ok = false;
  all_ok_ = all_ok_ && ok;
  if (mine) pending_.merge(std::move(*mine));
  if (note) pending_notes_.push_back(*note);
  if (who >= 0) here_[static_cast<size_t>(who)] = true;
  if (++arrived_ == hosts_) {
    last_ok_ = all_ok_;
    last_dir_ = std::move(pending_);
    pending_ = {};
    last_notes_ = std::move(pending_notes_);
    pending_notes_.clear();
    arrived_ = 0;
    all_ok_ = true;
    ++generation_;
    if (!names_.empty()) {
      std::string after = phase_after(stage);
      for (size_t i = 0; i < here_.size(); ++i) {
        here_[i] = false;
        phase_[i] = after;
      }
    }
    round_start_ = std::chrono::steady_clock::now();
    cv_.notify_all();
  } else {
    auto released = [&] { return generation_ != gen || !failure_.empty(); };
    if (timeout_.count() <= 0) {
      cv_.wait(lock, released);
    } else {
      while (!released()) {
        if (cv_.wait_until(lock, round_start_ + timeout_, released)) break;
        expire_locked();
      }
    }
    if (generation_ == gen) return false;  // failed for lateness (the round never completed)
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
  return arrive(-1, "exchange", ok, &mine, all);
}

bool InProcessChannel::barrier(const std::string& name, bool ok) {
  return arrive(-1, "stage " + name, ok, nullptr, nullptr);
}

bool InProcessChannel::signals(const std::string& workload, const std::map<std::string, int64_t>& add,
                               std::map<std::string, int64_t>* totals) {
  std::lock_guard lock(mu_);
  auto& mine = signals_[workload];
  for (const auto& [name, n] : add) mine[name] += n;
  if (totals) *totals = mine;
  return true;
}

bool InProcessChannel::gather(const std::string& name, const std::string& note, std::vector<std::string>* notes) {
  return arrive(-1, "workload " + name, true, nullptr, nullptr, "gather " + name, &note, notes);
}

}  // namespace qpo::exec
