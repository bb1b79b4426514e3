#include "workload/builtins.h"

#include <map>

namespace qpo::workload {

namespace {

const std::set<std::string> kBandwidthFields{"bw_avg", "bw_peak", "msg_rate"};
const std::set<std::string> kLatencyFields{"t_min", "t_max", "t_typical", "t_avg", "t_stdev", "p99", "p999"};
const std::set<std::string> kIncastFields{"bw_avg", "msg_rate", "loss"};

}  // namespace

// The summary fields each shipped script's report() fills (lua/qpo/perf.lua report_bw and
// report_lat, lua/examples/ud_incast.lua). Scripts from a path are only judged at run time.
const std::set<std::string>* reported_fields(const std::string& script) {
  static const std::map<std::string, const std::set<std::string>*> builtins{
      {"builtin:send_bw", &kBandwidthFields},           {"builtin:write_bw", &kBandwidthFields},
      {"builtin:read_bw", &kBandwidthFields},           {"builtin:atomic_bw", &kBandwidthFields},
      {"builtin:examples/mixed_burst", &kBandwidthFields}, {"builtin:examples/write_bw_hook", &kBandwidthFields},
      {"builtin:send_lat", &kLatencyFields},            {"builtin:write_lat", &kLatencyFields},
      {"builtin:read_lat", &kLatencyFields},            {"builtin:examples/ud_incast", &kIncastFields}};
  auto it = builtins.find(script);
  return it == builtins.end() ? nullptr : it->second;
}

bool latency_builtin(const std::string& script) { return reported_fields(script) == &kLatencyFields; }

}  // namespace qpo::workload
