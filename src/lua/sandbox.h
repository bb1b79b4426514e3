#pragma once
// What a workload script may touch. Sandboxed (the default): no processes (os.execute,
// io.popen, os.exit), no files except reading Lua from the allowed directories (dofile,
// loadfile, require), no C modules (package.loadlib, C searchers), no bytecode (load in text
// mode only; string.dump gone), no debug library beyond debug.traceback. Opting out
// (WorkloadSpec::sandbox = false) leaves the standard libraries whole.
#include <cstddef>
#include <string>

struct lua_State;

namespace qpo::lua {

// A Lua source file's text, for the script itself and for dofile/loadfile/require. Only
// regular files up to kMaxScriptBytes: `script: /dev/zero` or a FIFO would otherwise make
// `qpo validate` read forever or block. Throws ScriptError naming the path and the reason.
inline constexpr std::size_t kMaxScriptBytes = 4u << 20;
std::string read_script_file(const std::string& path);

struct Policy;
void install_sandbox(lua_State* L, const Policy& policy);

}  // namespace qpo::lua
