#pragma once
// Runs a system tool (tc, ip) with arguments, no shell in between.
#include <string>
#include <vector>

namespace qpo::exec {

// `program` is looked up in PATH; stdout and stderr go to *output. Returns the exit status,
// 127 when the program cannot be run, -1 when it did not exit normally.
int run_tool(const char* program, const std::vector<std::string>& args, std::string* output);

}  // namespace qpo::exec
