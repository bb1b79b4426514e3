#pragma once
// The scripts shipped in lua/, compiled in.
#include <optional>
#include <string>
#include <vector>

namespace qpo::lua {

struct EmbeddedScript {
  const char* path;  // relative to lua/: "write_bw.lua", "qpo/perf.lua", "examples/ud_incast.lua"
  const char* text;
};
extern const EmbeddedScript kEmbeddedScripts[];  // ends with {nullptr, nullptr}

// The text of lua/<path>: from $QPO_LUA_DIR when set and the file exists there, else compiled in.
std::optional<std::string> shipped_script(const std::string& path);
// Names usable as `builtin:NAME` (workloads and examples, without ".lua"; not the qpo/ modules).
std::vector<std::string> builtin_names();

}  // namespace qpo::lua
