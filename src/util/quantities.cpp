#include "util/quantities.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <string>

#include "util/strings.h"

namespace qpo::util {

namespace {

struct Suffix {
  const char* text;
  double factor;  // value x factor = value in the field's unit
};

constexpr double kMiB = 1024.0 * 1024.0;

// Bytes use perftest's binary multiples (its MB/sec is 2^20 bytes per second); bits, as
// link speeds are quoted, are decimal.
constexpr Suffix kBandwidth[] = {
    {"B/s", 1 / kMiB},        {"KB/s", 1 / 1024.0},      {"KiB/s", 1 / 1024.0}, {"MB/s", 1},
    {"MiB/s", 1},             {"GB/s", 1024},            {"GiB/s", 1024},       {"Mb/s", 1e6 / 8 / kMiB},
    {"Mbit/s", 1e6 / 8 / kMiB}, {"Gb/s", 1e9 / 8 / kMiB}, {"Gbit/s", 1e9 / 8 / kMiB}};
constexpr Suffix kRate[] = {{"pps", 1e-6}, {"Kpps", 1e-3}, {"kpps", 1e-3}, {"Mpps", 1}};
constexpr Suffix kLatency[] = {{"ns", 1e-3}, {"us", 1}, {"usec", 1}, {"ms", 1e3}, {"s", 1e6}};
constexpr Suffix kFraction[] = {{"%", 0.01}};

template <size_t N>
std::optional<double> factor_of(const Suffix (&table)[N], std::string_view unit) {
  std::string u(unit);
  // perftest writes MB/sec
  if (u.size() > 4 && u.substr(u.size() - 4) == "/sec") u = u.substr(0, u.size() - 4) + "/s";
  for (const auto& s : table)
    if (u == s.text) return s.factor;
  return std::nullopt;
}

}  // namespace

const char* unit_label(LimitUnit u) {
  switch (u) {
    case LimitUnit::Bandwidth: return "MB/s";
    case LimitUnit::MessageRate: return "Mpps";
    case LimitUnit::Latency: return "usec";
    case LimitUnit::Fraction: return "%";
  }
  return "";
}

double display_scale(LimitUnit u) { return u == LimitUnit::Fraction ? 100 : 1; }

std::optional<double> parse_limit(LimitUnit u, std::string_view text) {
  std::string s(trim(text));
  // The number: digits with at most one point, optionally an exponent. No sign: limits are >= 0.
  size_t i = 0;
  while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) ++i;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E') && i + 1 < s.size() &&
      (std::isdigit(static_cast<unsigned char>(s[i + 1])) || s[i + 1] == '-' || s[i + 1] == '+')) {
    i += 2;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
  }
  std::string number = s.substr(0, i);
  if (number.empty() || number.find_first_of("0123456789") == std::string::npos) return std::nullopt;
  char* end = nullptr;
  double v = std::strtod(number.c_str(), &end);
  if (*end != '\0' || !std::isfinite(v) || v < 0) return std::nullopt;
  std::string_view unit = trim(std::string_view(s).substr(i));
  if (unit.empty()) {
    // A bare loss figure is a percentage, as in `faults: { loss: 1 }`: max_loss: 1 is 1%.
    if (u == LimitUnit::Fraction) return v <= 100 ? std::optional<double>(v / 100) : std::nullopt;
    return v;
  }
  std::optional<double> f;
  switch (u) {
    case LimitUnit::Bandwidth: f = factor_of(kBandwidth, unit); break;
    case LimitUnit::MessageRate: f = factor_of(kRate, unit); break;
    case LimitUnit::Latency: f = factor_of(kLatency, unit); break;
    case LimitUnit::Fraction: f = factor_of(kFraction, unit); break;
  }
  if (!f) return std::nullopt;
  double out = v * *f;
  if (u == LimitUnit::Fraction && out > 1) return std::nullopt;
  return out;
}

std::string limit_what(LimitUnit u) {
  switch (u) {
    case LimitUnit::Bandwidth: return "a bandwidth in MB/s";
    case LimitUnit::MessageRate: return "a message rate in Mpps";
    case LimitUnit::Latency: return "a latency in usec";
    case LimitUnit::Fraction: return "a share of messages in 0..100%";
  }
  return "";
}

std::string limit_examples(LimitUnit u) {
  switch (u) {
    case LimitUnit::Bandwidth:
      return "write e.g. 40MB/s (MB = 2^20 bytes, as perftest), 1.5GB/s, 10Gb/s (bits), or a number in MB/s";
    case LimitUnit::MessageRate: return "write e.g. 0.5Mpps, 200Kpps, 5000pps, or a number in Mpps";
    case LimitUnit::Latency: return "write e.g. 12us, 1.5ms, 800ns, or a number in usec";
    case LimitUnit::Fraction: return "a percentage in 0..100, such as 1 or 0.5%";
  }
  return "";
}

}  // namespace qpo::util
