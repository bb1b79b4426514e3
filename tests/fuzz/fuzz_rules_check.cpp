// libFuzzer target for `qpo rules check` input: bytes -> lines -> check_line, plus the
// streaming reader run_rules_check over the same bytes (through fmemopen), which is what the
// CLI actually runs on stdin.
//
// Contract checked beyond "no crash": every verdict is one line (no '\n' inside), starts with
// "ok", "EINVAL" or "error:", and a malformed line is exactly an "error:" verdict.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "cli/rules_check.h"

namespace {

[[noreturn]] void fail(const char* what, std::string_view line, const std::string& verdict) {
  std::fprintf(stderr, "fuzz_rules_check: invariant broken: %s\n  line: '%.*s'\n  verdict: '%s'\n", what,
               static_cast<int>(line.size()), line.data(), verdict.c_str());
  __builtin_trap();
}

bool starts_with(const std::string& s, std::string_view p) { return s.compare(0, p.size(), p) == 0; }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > (1u << 20)) return -1;
  std::string_view all(reinterpret_cast<const char*>(data), size);
  size_t start = 0;
  while (start <= all.size()) {
    size_t nl = all.find('\n', start);
    std::string_view line = all.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start);
    auto r = qpo::cli::check_line(line);
    if (r.verdict.find('\n') != std::string::npos) fail("verdict spans lines", line, r.verdict);
    bool is_error = starts_with(r.verdict, "error:");
    if (!is_error && !starts_with(r.verdict, "ok") && !starts_with(r.verdict, "EINVAL"))
      fail("verdict is not ok / EINVAL / error:", line, r.verdict);
    if (r.malformed != is_error) fail("malformed flag disagrees with the verdict", line, r.verdict);
    if (nl == std::string_view::npos) break;
    start = nl + 1;
  }

  // The stdin path: buffered reads, partial lines, comments, the 64 KiB junk-line cut-off.
  if (size > 0) {
    std::FILE* in = fmemopen(const_cast<uint8_t*>(data), size, "rb");
    static std::FILE* out = std::fopen("/dev/null", "wb");
    if (in && out) qpo::cli::run_rules_check(in, out);
    if (in) std::fclose(in);
  }
  return 0;
}
