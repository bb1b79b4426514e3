#pragma once
// Per-provider known deviations (schemas/providers.yaml): capabilities a provider lacks that
// no ibv_query_device bit reveals.
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace qpo::spec {

class ProviderTable {
 public:
  static const ProviderTable& builtin();
  // The reason `provider` lacks `capability`, or nullopt when it is not known to lack it.
  std::optional<std::string> lacks(const std::string& provider, const std::string& capability) const;

  struct TransitionDeviation {
    std::string type, from, to, errno_name, why;
  };
  // A transition the generic table allows but `provider` refuses, or nullptr.
  const TransitionDeviation* transition_deviation(const std::string& provider, const std::string& type,
                                                  const std::string& from, const std::string& to) const;

 private:
  std::map<std::string, std::map<std::string, std::string>> unsupported_;
  std::map<std::string, std::vector<TransitionDeviation>> transitions_;
};

}  // namespace qpo::spec
