#pragma once
// `qpo rules check`: one line in ("<qp_type> <cur_state> <next_state> <attr_mask>"), one
// verdict out ("ok", or "EINVAL" with what is missing or forbidden). Kept apart from the CLI
// so tests and the fuzzer call it directly.
#include <cstdio>
#include <string>
#include <string_view>

namespace qpo::cli {

struct CheckLineResult {
  std::string verdict;  // without newline
  bool malformed = false;
};

CheckLineResult check_line(std::string_view line);

// Streams `in` to `out`; returns the number of malformed lines.
size_t run_rules_check(std::FILE* in, std::FILE* out);

}  // namespace qpo::cli
