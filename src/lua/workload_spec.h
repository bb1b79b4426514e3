#pragma once
// What a workload is, as plain data: the script, its args and its workers. No Lua VM behind
// it, so the scenario side (src/workload, check, exec's setup) builds it without linking Lua;
// lua/workload.h runs it.
#include <string>
#include <vector>

#include "lua/value.h"

namespace qpo::lua {

struct WorkerSpec {
  std::string name;                // in results and messages, usually the QP name ("qa")
  std::string role;                // the script function this worker runs ("initiator", "target")
  std::vector<std::string> qps;    // endpoints it drives (keys of the endpoint map); first = w.qp
  int64_t cpu = -1;                // `pin:`: the CPU its thread runs on; -1 = any
};

struct WorkloadSpec {
  std::string name;                // the scenario's workload name, for messages
  std::string script;              // "builtin:write_bw", or a path to a .lua file
  std::string source;              // the script text itself (tests, inline scenario scripts);
                                   // when set, `script` only names it in messages
  Value args = Value::table();     // w.args in every worker; setup(args) may complete it
  std::vector<WorkerSpec> workers;
  // Every worker of the workload on every host, in scenario order (w.workers, w.count and
  // w.index count them all); empty = `workers` (the workload runs on this host only).
  std::vector<WorkerSpec> all_workers;
  bool sandbox = true;             // false = the user opted in to os.execute, io.popen, C modules
  std::vector<std::string> lua_path;  // extra dirs for require/dofile/loadfile (the script's own
                                      // directory is always allowed)
  int timeout_ms = 10000;          // default completion timeout of streams and ping-pongs
};

}  // namespace qpo::lua
