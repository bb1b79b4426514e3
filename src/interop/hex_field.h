#pragma once
// The tools' text fields in hex: what both exchanges' parsers read (ibv_rc_pingpong's sscanf
// "%x", perftest's strtol(16): lenient on widths, so up to a maximum, not exactly).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace qpo::interop {

// One hex digit's value, or -1.
inline int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// 1 to `max_digits` hex digits and nothing else; nullopt otherwise.
inline std::optional<uint64_t> hex_field(std::string_view text, size_t max_digits) {
  if (text.empty() || text.size() > max_digits) return std::nullopt;
  uint64_t v = 0;
  for (char c : text) {
    int d = hex_digit(c);
    if (d < 0) return std::nullopt;
    v = v << 4 | static_cast<uint64_t>(d);
  }
  return v;
}

}  // namespace qpo::interop
