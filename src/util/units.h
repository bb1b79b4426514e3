#pragma once
// Sizes in scenarios: 4096, 0x1000, 64KiB, 1MiB, 2GiB, 1KB (SI, 1000), 8B.
#include <cstdint>
#include <string>
#include <string_view>
#include <optional>

namespace qpo::util {

// The size, or nullopt with `why` ("unknown size unit 'K'") and `hint` ("write 64KiB (powers
// of 1024) or 64KB (powers of 1000)"; may stay empty) when given: the readers' convention
// (docs/architecture.md section 4).
std::optional<uint64_t> parse_size(std::string_view text, std::string* why, std::string* hint = nullptr);

}  // namespace qpo::util
