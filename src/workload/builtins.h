#pragma once
// Facts about the shipped built-in workloads that the validator needs without running them.
#include <set>
#include <string>

namespace qpo::workload {

// The summary fields a built-in's report() fills ("bw_avg", "p99", ...); nullptr for a script
// from a path (judged at run time) or an unknown name.
const std::set<std::string>* reported_fields(const std::string& script);

// Whether the script is a latency built-in (send_lat, write_lat, read_lat): one that takes
// `clock: device`.
bool latency_builtin(const std::string& script);

}  // namespace qpo::workload
