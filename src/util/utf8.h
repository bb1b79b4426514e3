#pragma once
// UTF-8 decoding and the encoding check run on every scenario before YAML sees it: yaml-cpp
// reads UTF-16/32 files as something else (a UTF-16 file validated as an empty scenario) and
// passes broken UTF-8 through to every message that quotes the file.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace qpo::util {

// The length of the UTF-8 sequence at s[i] and its code point, or 0 when it is not valid
// UTF-8 (truncated, overlong, a surrogate, above U+10FFFF, a stray continuation byte).
size_t utf8_at(std::string_view s, size_t i, uint32_t* cp);

// Why a text is not UTF-8, and where (1-based line and byte column of the first bad byte).
struct EncodingProblem {
  std::string found;  // "UTF-16 little-endian (byte order mark FF FE)", "invalid UTF-8 (byte 0xC3 ...)"
  int line = 1;
  int col = 1;
};

// Nothing when `text` is UTF-8 without NUL bytes (a UTF-8 byte order mark is fine).
std::optional<EncodingProblem> find_encoding_problem(std::string_view text);

}  // namespace qpo::util
