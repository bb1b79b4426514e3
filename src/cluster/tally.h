#pragma once
// The control plane's traffic in one multi-host run, as `qpo run --verbose` shows it (issue 20:
// the messages stay bounded, one exchange per host whatever the QP count): messages and bytes
// per type and direction (each with its 4-byte frame), and the wall time up to each round the
// hosts meet at.
#include <chrono>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace qpo::cluster {

class ControlTally {
 public:
  using Clock = std::chrono::steady_clock;
  explicit ControlTally(Clock::time_point start = Clock::now()) : start_(start), mark_(start) {}

  // A message this controller wrote (compact JSON, {"type":"run",...}), or one it read.
  void sent(const std::string& json);
  void received(const std::string& type, size_t json_bytes);
  // The hosts met (or the run ended): `what` took the time since the last one.
  void lap(const std::string& what, Clock::time_point now = Clock::now());
  void lap(const std::string& what, double seconds);

  // "qpo: control plane: 2 hosts, 5 rounds in 56.66 s; sent 16 messages, 612.3 kB: 10
  // barrier_result (390 B), ...; received ...\nqpo: wall time per round: launch + hello 0.59 s, ...\n"
  // Rounds past the first 30 (a script's meeting rounds) are summed into one "N more rounds".
  // The first lap (launch + hello) and the last (the rest) are not rounds.
  std::string text(size_t hosts) const;

 private:
  struct Count {
    size_t messages = 0, bytes = 0;
  };
  static std::string counts_text(const std::map<std::string, Count>& m);
  Clock::time_point start_, mark_;
  double total_ = 0;
  std::map<std::string, Count> sent_, received_;
  std::vector<std::pair<std::string, double>> laps_;
};

}  // namespace qpo::cluster
