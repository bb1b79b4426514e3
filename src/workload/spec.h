#pragma once
// A scenario's script workload as the Lua runtime sees it (lua::WorkloadSpec): which script,
// which args, which workers. `qpo validate` (validate/script_setup.cpp runs the script's
// setup(args) without devices) and `qpo run` (exec/lua_workload.cpp) both build it here, so
// the args the validator accepted are exactly the args the run gets. Plain data: no Lua VM.
#include "lua/workload_spec.h"
#include "scenario/model.h"

namespace qpo::workload {

// args: the workload's `args:`, plus `size`/`iterations` when the workload itself gives them
// (never the op loop's defaults: the script has its own), plus `local_mr`/`remote_mr`.
// Workers: one "initiator" per QP in `qp:`, then one "target" per distinct peer (connect:)
// of theirs. Timeout and sandbox keep the runtime's defaults; the run sets its own timeout.
lua::WorkloadSpec script_spec(const scenario::Scenario& s, const scenario::Workload& w);

// `script:` as the runtime resolves it: builtin:NAME as is; a relative path against the
// scenario file's directory when the file is there, else as written (relative to the cwd).
std::string script_location(const scenario::Scenario& s, const std::string& script);

lua::Value to_lua(const scenario::ScriptValue& v);

}  // namespace qpo::workload
