#pragma once
// Strict JSON handed to the codec's readers (cluster/codec.h), which take a YAML::Node: qpo
// report's results files are read with util/json_reader.h, so YAML that is not JSON (anchors,
// aliases, tags, single quotes) is an error with its line and column, not a node graph that
// expands as it is walked.
#include <optional>
#include <string>

#include "report/run_report.h"
#include "util/json_reader.h"

namespace YAML {
class Node;
}

namespace qpo::cluster {

// `v` as yaml-cpp would load the same JSON: strings as quoted scalars (tag "!"), numbers and
// true/false as plain scalars written as in the text, null as a null node.
YAML::Node yaml_node(const util::json::Value& v);

// A run result (report_json's form) read by read_report (cluster/codec.h).
report::RunReport report_from_json(const util::json::Value& v);

}  // namespace qpo::cluster
