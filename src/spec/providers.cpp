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
    for (const auto& p : root["providers"])
      for (const auto& d : p.second["transitions"])
        t.transitions_[p.first.as<std::string>()].push_back(
            {d["type"].as<std::string>(), d["from"].as<std::string>(), d["to"].as<std::string>(),
             d["errno"].as<std::string>(), d["why"].as<std::string>()});
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

const ProviderTable::TransitionDeviation* ProviderTable::transition_deviation(const std::string& provider,
                                                                             const std::string& type,
                                                                             const std::string& from,
                                                                             const std::string& to) const {
  auto p = transitions_.find(provider);
  if (p == transitions_.end()) return nullptr;
  for (const auto& d : p->second)
    if (d.type == type && d.from == from && d.to == to) return &d;
  return nullptr;
}

}  // namespace qpo::spec
