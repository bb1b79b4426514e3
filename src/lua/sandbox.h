#pragma once
// What a workload script may touch. Sandboxed (the default): no processes (os.execute,
// io.popen, os.exit), no files except reading Lua from the allowed directories (dofile,
// loadfile, require), no C modules (package.loadlib, C searchers), no bytecode (load in text
// mode only; string.dump gone), no debug library beyond debug.traceback. Opting out
// (WorkloadSpec::sandbox = false) leaves the standard libraries whole.
struct lua_State;

namespace qpo::lua {

struct Policy;
void install_sandbox(lua_State* L, const Policy& policy);

}  // namespace qpo::lua
