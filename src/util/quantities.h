#pragma once
// Quantities written with units in scenarios and workload args: bandwidths (MB/s as perftest,
// GB/s, Gb/s, ...), message rates (Mpps, Kpps, pps), latencies (us, ms, ns) and fractions (%).
// Thresholds (scenario/thresholds.h) and the rate limit of the bandwidth built-ins (qpo.rate)
// read them through this one table.
#include <optional>
#include <string>
#include <string_view>

namespace qpo::util {

// perftest's MB in its MB/sec: 2^20 bytes. Every MB/s qpo prints or reads uses it.
inline constexpr double kBytesPerMB = 1024.0 * 1024.0;

enum class LimitUnit { Bandwidth, MessageRate, Latency, Fraction };

// "MB/s", "Mpps", "usec", "%".
const char* unit_label(LimitUnit u);
// Field value x this = value in unit_label (only Fraction differs: 0.01 -> 1 %).
double display_scale(LimitUnit u);

// A limit as written, in the field's own unit (MB/s, Mpps, usec, fraction); nullopt when the
// text is not a non-negative number with one of the unit's suffixes.
std::optional<double> parse_limit(LimitUnit u, std::string_view text);
// "a bandwidth in MB/s", for "'x' is not ..." messages.
std::string limit_what(LimitUnit u);
// What to write instead, for a diagnostic's hint.
std::string limit_examples(LimitUnit u);

}  // namespace qpo::util
