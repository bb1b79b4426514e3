#include "util/units.h"

#include <array>

#include "util/strings.h"

namespace qpo::util {

namespace {
struct Unit {
  std::string_view name;
  uint64_t factor;
};
constexpr std::array<Unit, 8> kUnits{{{"B", 1},
                                      {"KiB", 1ULL << 10},
                                      {"MiB", 1ULL << 20},
                                      {"GiB", 1ULL << 30},
                                      {"TiB", 1ULL << 40},
                                      {"KB", 1000ULL},
                                      {"MB", 1000ULL * 1000},
                                      {"GB", 1000ULL * 1000 * 1000}}};
std::nullopt_t refuse(std::string* why, std::string* hint, std::string message, std::string advice) {
  if (why) *why = std::move(message);
  if (hint) *hint = std::move(advice);
  return std::nullopt;
}
}  // namespace

std::optional<uint64_t> parse_size(std::string_view text, std::string* why, std::string* hint) {
  std::string_view s = trim(text);
  // The number part: 0x-hex or decimal (with optional '_' separators), then the unit.
  bool is_hex = s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
  size_t digits = is_hex ? 2 : 0;
  auto is_digit = [&](char c) {
    if (c >= '0' && c <= '9') return true;
    if (c == '_') return true;
    return is_hex && ((c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'));
  };
  while (digits < s.size() && is_digit(s[digits])) ++digits;
  auto number = digits == 0 || (is_hex && digits == 2) ? std::nullopt : parse_uint(s.substr(0, digits));
  if (!number) return refuse(why, hint, "'" + std::string(s) + "' is not a size", "write e.g. 4096, 64KiB or 1MiB");
  std::string_view unit = trim(s.substr(digits));
  if (unit.empty()) return *number;
  for (const auto& u : kUnits) {
    if (unit == u.name) {
      if (*number > UINT64_MAX / u.factor) return refuse(why, hint, "size '" + std::string(s) + "' overflows 64 bits", "");
      return *number * u.factor;
    }
  }
  std::string advice = "units: B, KiB, MiB, GiB, TiB (powers of 1024) or KB, MB, GB (powers of 1000)";
  std::string upper = to_upper(unit);
  if (upper == "K" || upper == "M" || upper == "G")
    advice = "write " + std::string(s.substr(0, digits)) + upper + "iB (powers of 1024) or " +
           std::string(s.substr(0, digits)) + upper + "B (powers of 1000)";
  return refuse(why, hint, "unknown size unit '" + std::string(unit) + "'", advice);
}

}  // namespace qpo::util
