#pragma once
// Untrusted script code with nothing around it to stop it: `qpo validate` runs a script's top
// level and setup(args) in a child process. The Lua hook of lua/limits.h stops Lua code at the
// time limit with a precise message, but not a C function that runs for hours (pattern
// backtracking in string.find), a sleep, or whatever the hook cannot see: the parent kills the
// child when it is not back shortly after the limit. The child's stdout is its stderr, so
// script output cannot reach a JSON document on the parent's stdout.
#include <chrono>
#include <functional>
#include <string>

namespace qpo::lua {

// Runs `body` in a child and returns its answer (at most 64 KiB). When the child is not back
// within `limit` plus a grace period, or dies, returns a message that starts with `what`
// ("the script's top level or setup() did not finish within 2 s ...").
std::string run_isolated(const std::function<std::string()>& body, std::chrono::milliseconds limit,
                         const std::string& what);

}  // namespace qpo::lua
