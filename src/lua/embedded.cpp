#include "lua/embedded.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace qpo::lua {

std::optional<std::string> shipped_script(const std::string& path) {
  if (const char* dir = std::getenv("QPO_LUA_DIR"); dir && *dir && path.find("..") == std::string::npos) {
    std::ifstream in(std::string(dir) + "/" + path);
    if (in) {
      std::ostringstream s;
      s << in.rdbuf();
      return s.str();
    }
  }
  for (const EmbeddedScript* e = kEmbeddedScripts; e->path; ++e)
    if (path == e->path) return std::string(e->text);
  return std::nullopt;
}

std::vector<std::string> builtin_names() {
  std::vector<std::string> out;
  for (const EmbeddedScript* e = kEmbeddedScripts; e->path; ++e) {
    std::string p = e->path;
    if (p.rfind("qpo/", 0) == 0 || p.size() < 5) continue;
    out.push_back(p.substr(0, p.size() - 4));
  }
  return out;
}

}  // namespace qpo::lua
