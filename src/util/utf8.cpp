#include "util/utf8.h"

#include <algorithm>
#include <cstdio>

namespace qpo::util {

size_t utf8_at(std::string_view s, size_t i, uint32_t* cp) {
  auto b = static_cast<unsigned char>(s[i]);
  size_t n = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  uint32_t c = n == 1 ? b : n == 2 ? (b & 0x1F) : n == 3 ? (b & 0x0F) : (b & 0x07);
  for (size_t k = 1; k < n; ++k) {
    auto x = static_cast<unsigned char>(s[i + k]);
    if ((x >> 6) != 0x2) return 0;
    c = (c << 6) | (x & 0x3F);
  }
  static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (c < kMin[n] || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return 0;  // overlong, surrogate
  *cp = c;
  return n;
}

namespace {

struct Bom {
  std::string_view bytes;
  const char* found;
};

// UTF-32 first: its little-endian mark begins with UTF-16's.
constexpr Bom kForeignBoms[] = {
    {std::string_view("\xFF\xFE\x00\x00", 4), "UTF-32 little-endian (byte order mark FF FE 00 00)"},
    {std::string_view("\x00\x00\xFE\xFF", 4), "UTF-32 big-endian (byte order mark 00 00 FE FF)"},
    {std::string_view("\xFF\xFE", 2), "UTF-16 little-endian (byte order mark FF FE)"},
    {std::string_view("\xFE\xFF", 2), "UTF-16 big-endian (byte order mark FE FF)"},
};

// Without a mark, UTF-16/32 text starts as ASCII with NUL bytes between: "v\0e\0r\0" is
// UTF-16 little-endian. Judged on the first code units, which in a scenario are ASCII.
struct Wide {
  size_t unit;
  size_t ascii_at;  // where in each unit the ASCII byte sits
  const char* found;
};
constexpr Wide kWide[] = {
    {4, 0, "UTF-32 little-endian (no byte order mark)"},
    {4, 3, "UTF-32 big-endian (no byte order mark)"},
    {2, 0, "UTF-16 little-endian (no byte order mark)"},
    {2, 1, "UTF-16 big-endian (no byte order mark)"},
};

const Wide* guess_wide(std::string_view s) {
  for (const auto& w : kWide) {
    size_t units = std::min<size_t>(s.size() / w.unit, 4);
    if (units < 2) continue;
    bool fits = true;
    for (size_t i = 0; i < units * w.unit && fits; ++i)
      fits = (s[i] == '\0') == (i % w.unit != w.ascii_at);
    if (fits) return &w;
  }
  return nullptr;
}

}  // namespace

std::optional<EncodingProblem> find_encoding_problem(std::string_view text) {
  for (const auto& bom : kForeignBoms)
    if (text.substr(0, bom.bytes.size()) == bom.bytes) return EncodingProblem{bom.found, 1, 1};
  // The first NUL byte is the first byte that is not UTF-8 text.
  if (const Wide* wide = guess_wide(text)) return EncodingProblem{wide->found, 1, wide->ascii_at == 0 ? 2 : 1};
  int line = 1;
  size_t line_start = 0;
  for (size_t i = 0; i < text.size();) {
    uint32_t cp = 0;
    size_t n = utf8_at(text, i, &cp);
    if (n == 0 || cp == 0) {
      EncodingProblem p{"", line, static_cast<int>(i - line_start) + 1};
      char byte[8];
      std::snprintf(byte, sizeof byte, "0x%02X", static_cast<unsigned char>(text[i]));
      p.found = cp == 0 && n == 1 ? std::string("a NUL byte (0x00), so not text")
                                  : std::string("invalid UTF-8 (byte ") + byte + " does not start a valid sequence)";
      return p;
    }
    if (cp == '\n') {
      ++line;
      line_start = i + 1;
    }
    i += n;
  }
  return std::nullopt;
}

}  // namespace qpo::util
