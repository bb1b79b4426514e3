#pragma once
// JSON forms of what crosses the wire: messages, the exchange Directory, and run reports.
// Parsing uses yaml-cpp (JSON is YAML), so no new dependency.
#include <optional>
#include <string>

#include "exec/exchange.h"
#include "report/run_report.h"
#include "util/json_writer.h"

namespace YAML {
class Node;
}

namespace qpo::cluster {

// 2: script workloads' w:signal() counters cross hosts ("signals" / "signals_result").
constexpr int kProtocolVersion = 2;

void write_directory(util::JsonWriter& w, const exec::Directory& d);
exec::Directory read_directory(const YAML::Node& n);

std::string report_json(const report::RunReport& r);
report::RunReport read_report(const YAML::Node& n);

// Parses a message; nullopt (with error) when it is not a JSON object with a "type".
std::optional<YAML::Node> parse_message(const std::string& text, std::string* error);

}  // namespace qpo::cluster
