#pragma once
// Per-provider known deviations (schemas/providers.yaml): capabilities a provider lacks that
// no ibv_query_device bit reveals.
#include <map>
#include <optional>
#include <string>

namespace qpo::spec {

class ProviderTable {
 public:
  static const ProviderTable& builtin();
  // The reason `provider` lacks `capability`, or nullopt when it is not known to lack it.
  std::optional<std::string> lacks(const std::string& provider, const std::string& capability) const;

 private:
  std::map<std::string, std::map<std::string, std::string>> unsupported_;
};

}  // namespace qpo::spec
