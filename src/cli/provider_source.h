#pragma once
// `--provider NAME|FILE|FILE:NAME` (qpo validate) and `--expect` (qpo probe): a provider entry
// from the compiled-in schemas/providers.yaml by name, or from a file in its format (what
// `qpo probe --out FILE` writes).
#include <optional>
#include <string>

#include "spec/providers.h"

namespace qpo::cli {

struct ProviderSource {
  spec::ProviderEntry entry;
  std::string origin;  // "schemas/providers.yaml" or the file's path
};

// A provider file (capped, regular files only, nesting checked before parsing). Throws
// std::runtime_error with a message for the user.
spec::ProviderTable load_provider_file(const std::string& path);

// Resolves `text`; `fallback_name` picks the entry of a multi-provider file when `text` names
// none. Throws std::runtime_error with a message for the user.
ProviderSource resolve_provider(const std::string& text, const std::string& fallback_name = "");

}  // namespace qpo::cli
