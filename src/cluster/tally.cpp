#include "cluster/tally.h"

#include <cstdio>
#include <string_view>

namespace qpo::cluster {

namespace {

std::string size_text(size_t bytes) {
  char b[32];
  if (bytes < 10000) std::snprintf(b, sizeof b, "%zu B", bytes);
  else std::snprintf(b, sizeof b, "%.1f kB", static_cast<double>(bytes) / 1e3);
  return b;
}

std::string seconds_text(double s) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f s", s);
  return b;
}

}  // namespace

void ControlTally::sent(const std::string& json) {
  constexpr std::string_view key = "\"type\":\"";
  std::string type = "?";
  if (auto p = json.find(key); p != std::string::npos) {
    p += key.size();
    auto end = json.find('"', p);
    if (end != std::string::npos && end > p) type = json.substr(p, end - p);
  }
  auto& c = sent_[type];
  ++c.messages;
  c.bytes += json.size() + 4;
}

void ControlTally::received(const std::string& type, size_t json_bytes) {
  auto& c = received_[type.empty() ? "?" : type];
  ++c.messages;
  c.bytes += json_bytes + 4;
}

void ControlTally::lap(const std::string& what, Clock::time_point now) {
  lap(what, std::chrono::duration<double>(now - mark_).count());
  mark_ = now;
}

void ControlTally::lap(const std::string& what, double seconds) {
  laps_.emplace_back(what, seconds);
  total_ += seconds;
}

std::string ControlTally::counts_text(const std::map<std::string, Count>& m) {
  std::string list;
  size_t n = 0, bytes = 0;
  for (const auto& [type, c] : m) {
    n += c.messages;
    bytes += c.bytes;
    list += (list.empty() ? "" : ", ") + std::to_string(c.messages) + " " + type + " (" + size_text(c.bytes) + ")";
  }
  return std::to_string(n) + " messages, " + size_text(bytes) + (list.empty() ? "" : ": " + list);
}

std::string ControlTally::text(size_t hosts) const {
  constexpr size_t kShown = 30;
  std::string times;
  double middle = 0;
  for (size_t i = 0; i < laps_.size(); ++i) {
    bool last = i + 1 == laps_.size();
    if (i >= kShown && !last) {
      middle += laps_[i].second;
      continue;
    }
    if (last && laps_.size() > kShown + 1)
      times += ", " + std::to_string(laps_.size() - kShown - 1) + " more rounds " + seconds_text(middle);
    times += (times.empty() ? "" : ", ") + laps_[i].first + " " + seconds_text(laps_[i].second);
  }
  size_t rounds = laps_.size() >= 2 ? laps_.size() - 2 : 0;
  return "qpo: control plane: " + std::to_string(hosts) + " hosts, " + std::to_string(rounds) + " rounds in " +
         seconds_text(total_) + "; sent " + counts_text(sent_) + "; received " + counts_text(received_) +
         "\nqpo: wall time per round: " + times + "\n";
}

}  // namespace qpo::cluster
