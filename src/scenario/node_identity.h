#pragma once
// A yaml-cpp node's identity as a pointer, to hash nodes by. YAML::Node::is() compares two
// handles by the node they share (an alias and its anchor share one), but yaml-cpp 0.7 has no
// hash or ordering for it: finding a node among N others took N calls to is(), and 20,000
// --set paths made that quadratic.
#include <yaml-cpp/yaml.h>

namespace qpo::scenario {
struct NodeIdentityTag {};
}  // namespace qpo::scenario

namespace YAML {
// yaml-cpp befriends every as_if<T, S>; this one reads the shared reference that Node::is()
// compares, and wraps a node built from parser events (scenario/yaml_parse.h) in a handle.
template <>
struct as_if<qpo::scenario::NodeIdentityTag, void> {
  static const void* of(const Node& n) { return n.m_isValid && n.m_pNode ? n.m_pNode->ref() : nullptr; }
  static Node wrap(detail::node& n, detail::shared_memory_holder memory) { return Node(n, std::move(memory)); }
};
}  // namespace YAML

namespace qpo::scenario {

// Equal for two handles on one node (n.is(m)); nullptr for an invalid or empty handle.
inline const void* node_identity(const YAML::Node& n) { return YAML::as_if<NodeIdentityTag, void>::of(n); }

}  // namespace qpo::scenario
