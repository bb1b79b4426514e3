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

// The verdict ibv_modify_qp gives a user-space caller: bits uverbs removes from the mask for
// the QP type (XRC) are ignored, not EINVAL, and the verdict says so. `in_kernel`: the state
// table's own verdict, as an in-kernel caller of ib_modify_qp gets it.
CheckLineResult check_line(std::string_view line, bool in_kernel = false);

// Streams `in` to `out`; returns the number of malformed lines.
size_t run_rules_check(std::FILE* in, std::FILE* out, bool in_kernel = false);

}  // namespace qpo::cli
