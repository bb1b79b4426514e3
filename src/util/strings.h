#pragma once
// Small string helpers shared by every layer.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace qpo::util {

std::string to_upper(std::string_view s);
std::string to_lower(std::string_view s);
std::string_view trim(std::string_view s);
std::vector<std::string_view> split(std::string_view s, char sep);
std::string join(const std::vector<std::string>& parts, std::string_view sep);
bool starts_with_ci(std::string_view s, std::string_view prefix);

// Unsigned integer in decimal or 0x-hex, whole string, no sign; nullopt on junk or overflow.
std::optional<uint64_t> parse_uint(std::string_view s);

// Levenshtein distance, capped work for long inputs (returns a large value past 64 chars).
size_t edit_distance(std::string_view a, std::string_view b);

// The closest candidate when it is plausibly a typo of `word` (distance <= 1/3 of length,
// at least 1, at most 3), otherwise empty.
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

// "0x%x"
std::string hex(uint64_t v);

// Text safe to print on a terminal: control characters (ESC, BEL, CR, ...; \n too unless
// `keep_newlines`), Unicode format characters that reorder or hide text (bidi overrides and
// isolates, zero-width spaces and joiners, BOM) and bytes that are not UTF-8 are written as
// \xNN or \u{NNNN}; past `max` bytes the rest is cut and counted ("... [1234 more bytes]").
std::string printable(std::string_view s, size_t max = 4096, bool keep_newlines = false);

}  // namespace qpo::util
