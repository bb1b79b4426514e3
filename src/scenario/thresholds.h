#pragma once
// The thresholds a script workload may set (`thresholds:` in a workload), and the units their
// limits are written in. Each one compares one field of the script's summary (what its
// report() returns; the built-ins use perftest's names and units) with a limit:
//
//   min_bw        bw_avg     MB/s (MB = 2^20 bytes, as perftest): 40, "40MB/s", "1.5GB/s", "10Gb/s"
//   min_msg_rate  msg_rate   Mpps: 0.5, "0.5Mpps", "200Kpps", "5000pps"
//   max_p99       p99        usec: 12, "12us", "1.5ms", "800ns"
//   max_p999      p999       usec
//   max_avg       t_avg      usec
//   max_typical   t_typical  usec (the median)
//   max_loss      loss       a fraction of messages (ud_incast): "1%", 0.01
//
// A bare number is in the unit of the field. For a size sweep the summary's top-level fields
// are the last (largest) size's, so that is the size a threshold judges.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace qpo::scenario {

enum class LimitUnit { Bandwidth, MessageRate, Latency, Fraction };

struct ThresholdKind {
  const char* name;    // min_bw
  const char* field;   // bw_avg
  bool minimum;        // true: measured >= limit passes
  LimitUnit unit;
};

const std::vector<ThresholdKind>& threshold_kinds();
const ThresholdKind* threshold_kind(std::string_view name);

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

}  // namespace qpo::scenario
