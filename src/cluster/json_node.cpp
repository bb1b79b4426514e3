#include "cluster/json_node.h"

#include <yaml-cpp/yaml.h>

#include "cluster/codec.h"

namespace qpo::cluster {

// Recursion follows the value's nesting, which json::parse caps.
YAML::Node yaml_node(const util::json::Value& v) {
  using util::json::Kind;
  switch (v.kind) {
    case Kind::Null: return YAML::Node(YAML::NodeType::Null);
    case Kind::Bool: return YAML::Node(v.boolean ? "true" : "false");
    case Kind::Number: return YAML::Node(v.text);
    case Kind::String: {
      YAML::Node n(v.text);
      n.SetTag("!");
      return n;
    }
    case Kind::Array: {
      YAML::Node n(YAML::NodeType::Sequence);
      for (const auto& item : v.items) n.push_back(yaml_node(item));
      return n;
    }
    case Kind::Object: {
      YAML::Node n(YAML::NodeType::Map);
      for (const auto& [key, member] : v.members) n.force_insert(key, yaml_node(member));  // keys are unique
      return n;
    }
  }
  return YAML::Node();
}

report::RunReport report_from_json(const util::json::Value& v) { return read_report(yaml_node(v)); }

}  // namespace qpo::cluster
