#pragma once
// Sizes in scenarios: 4096, 0x1000, 64KiB, 1MiB, 2GiB, 1KB (SI, 1000), 8B.
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

namespace qpo::util {

struct SizeError {
  std::string message;  // "unknown unit 'K'"
  std::string hint;     // "write 64KiB (1024 bytes per KiB) or 64KB (1000)"
};

std::variant<uint64_t, SizeError> parse_size(std::string_view text);

}  // namespace qpo::util
