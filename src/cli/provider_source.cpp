#include "cli/provider_source.h"

#include <filesystem>
#include <stdexcept>

#include "cli/input.h"
#include "util/input_file.h"
#include "util/strings.h"

namespace qpo::cli {

namespace {

std::vector<std::string> names(const spec::ProviderTable& t) {
  std::vector<std::string> out;
  for (const auto& [name, e] : t.entries()) out.push_back(name);
  return out;
}

}  // namespace

spec::ProviderTable load_provider_file(const std::string& path) {
  auto file = util::read_input_file(path, util::kProviderInput);
  if (!file) throw std::runtime_error(file.error);
  if (auto deep = too_deep_to_parse(file.text, path, util::kProviderInput.noun)) throw std::runtime_error(*deep);
  return spec::ProviderTable::parse(file.text, path);
}

ProviderSource resolve_provider(const std::string& text, const std::string& fallback_name) {
  std::error_code ec;
  std::string path = text, name;
  if (!std::filesystem::exists(path, ec)) {
    auto colon = text.rfind(':');
    if (colon != std::string::npos && colon > 0 && std::filesystem::exists(text.substr(0, colon), ec)) {
      path = text.substr(0, colon);
      name = text.substr(colon + 1);
    } else {
      path.clear();
    }
  }
  if (path.empty()) {
    const auto& builtin = spec::ProviderTable::builtin();
    if (const auto* e = builtin.entry(text)) return {*e, "schemas/providers.yaml"};
    if (text.find('/') != std::string::npos || text.find(".y") != std::string::npos)
      throw std::runtime_error("cannot read provider file " + text + ": no such file");
    throw std::runtime_error("no provider '" + text + "' in schemas/providers.yaml (known: " +
                             util::join(names(builtin), ", ") + "); give a file `qpo probe --out` wrote");
  }
  auto table = load_provider_file(path);
  if (name.empty()) {
    if (table.entries().size() == 1) return {table.entries().begin()->second, path};
    name = fallback_name;
  }
  if (const auto* e = table.entry(name)) return {*e, path};
  throw std::runtime_error(path + " has " +
                           (name.empty() ? std::string("several providers") : "no provider '" + name + "'") +
                           " (" + util::join(names(table), ", ") + "); name one: --provider " + path + ":NAME");
}

}  // namespace qpo::cli
