#include "spec/providers.h"

#include <yaml-cpp/yaml.h>

namespace qpo::spec {

extern const char kBuiltinProvidersYaml[];

const ProviderTable& ProviderTable::builtin() {
  static const ProviderTable table = [] {
    ProviderTable t;
    YAML::Node root = YAML::Load(kBuiltinProvidersYaml);
    for (const auto& p : root["providers"])
      for (const auto& u : p.second["unsupported"])
        t.unsupported_[p.first.as<std::string>()][u.first.as<std::string>()] = u.second.as<std::string>();
    return t;
  }();
  return table;
}

std::optional<std::string> ProviderTable::lacks(const std::string& provider, const std::string& capability) const {
  auto p = unsupported_.find(provider);
  if (p == unsupported_.end()) return std::nullopt;
  auto c = p->second.find(capability);
  if (c == p->second.end()) return std::nullopt;
  return c->second;
}

}  // namespace qpo::spec
