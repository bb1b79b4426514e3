#include "interop/perftest_talk.h"

namespace qpo::interop {

std::optional<std::string> PerftestTalk::swap(const std::string& mine, size_t theirs_bytes, Deadline deadline,
                                              const char* what, std::string* why) {
  std::string err;
  if (client_ && !pipe_->send(mine, deadline, &err)) {
    *why = std::string("sending ") + what + ": " + err;
    return std::nullopt;
  }
  auto theirs = pipe_->receive(theirs_bytes, deadline, &err, stop_);
  if (!theirs) {
    *why = std::string("waiting for the tool's ") + what + ": " + err;
    return std::nullopt;
  }
  if (!client_ && !pipe_->send(mine, deadline, &err)) {
    *why = std::string("sending ") + what + ": " + err;
    return std::nullopt;
  }
  return theirs;
}

std::optional<PerftestOpening> PerftestTalk::opening(int mtu_enum, Deadline deadline, std::string* why) {
  PerftestOpening o;
  auto version = swap(format_perftest_version(kPerftestVersion), kPerftestVersionBytes, deadline, "version", why);
  if (!version) return std::nullopt;
  auto v = parse_perftest_version(*version, why);
  if (!v) return std::nullopt;
  o.version = *v;
  auto cycle = swap(format_be32(kPerftestCycleBuffer), 4, deadline, "cycle buffer size", why);
  if (!cycle) return std::nullopt;
  auto line = swap(format_be32(kPerftestCacheLine), 4, deadline, "cache line size", why);
  if (!line) return std::nullopt;
  o.cycle_buffer = parse_be32(*cycle).value_or(0);
  o.cache_line = parse_be32(*line).value_or(0);
  auto mtu = swap(format_perftest_mtu(mtu_enum), 2, deadline, "MTU", why);
  if (!mtu) return std::nullopt;
  o.mtu = parse_perftest_mtu(*mtu);
  return o;
}

std::optional<PerftestKeys> PerftestTalk::parse_keys(const std::string& bytes, std::string* why) const {
  std::string err;
  auto k = pipe_->rdma() ? parse_perftest_dest(bytes, &err) : parse_perftest_keys(bytes, &err);
  if (!k) *why = remote() + " sent no perftest keys: " + err;
  return k;
}

std::optional<PerftestKeys> PerftestTalk::keys(const PerftestKeys& mine, Deadline deadline, std::string* why) {
  bool rdma = pipe_->rdma();
  auto theirs = swap(rdma ? format_perftest_dest(mine) : format_perftest_keys(mine),
                     rdma ? kPerftestDestBytes : kPerftestKeysBytes, deadline, "keys", why);
  if (!theirs) return std::nullopt;
  return parse_keys(*theirs, why);
}

std::optional<PerftestKeys> PerftestTalk::read_keys(Deadline deadline, std::string* why) {
  std::string err;
  auto theirs = pipe_->receive(pipe_->rdma() ? kPerftestDestBytes : kPerftestKeysBytes, deadline, &err, stop_);
  if (!theirs) {
    *why = "waiting for the tool's keys: " + err;
    return std::nullopt;
  }
  return parse_keys(*theirs, why);
}

bool PerftestTalk::answer_keys(const PerftestKeys& mine, Deadline deadline, std::string* why) {
  std::string err;
  if (pipe_->send(pipe_->rdma() ? format_perftest_dest(mine) : format_perftest_keys(mine), deadline, &err)) return true;
  *why = "sending keys: " + err;
  return false;
}

std::optional<PerftestReport> PerftestTalk::reports(const PerftestReport& mine, Deadline deadline, std::string* why) {
  static const char* units[] = {"report (size)", "report (iterations)", "report (BW peak)", "report (BW average)",
                                "report (message rate)"};
  auto out = format_perftest_report(mine);
  std::array<std::string, 5> in;
  for (size_t i = 0; i < out.size(); ++i) {
    auto theirs = swap(out[i], kPerftestReportUnitBytes[i], deadline, units[i], why);
    if (!theirs) return std::nullopt;
    in[i] = std::move(*theirs);
  }
  return parse_perftest_report(in);
}

bool PerftestTalk::close(const PerftestKeys& mine, Deadline deadline, std::string* why) {
  if (!keys(mine, deadline, why)) return false;
  if (pipe_->rdma()) return true;  // ctx_close_connection writes "done" on its socket only
  std::string err;
  if (!pipe_->send(kPerftestDone, deadline, &err)) {
    *why = "sending done: " + err;
    return false;
  }
  return true;
}

}  // namespace qpo::interop
