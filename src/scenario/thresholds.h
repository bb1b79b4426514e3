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

#include "util/quantities.h"

namespace qpo::scenario {

// The units a limit is written in (util/quantities.h): one table for thresholds and rates.
using util::LimitUnit;
using util::parse_limit;
using util::unit_label;
using util::display_scale;
using util::limit_what;
using util::limit_examples;

struct ThresholdKind {
  const char* name;    // min_bw
  const char* field;   // bw_avg
  bool minimum;        // true: measured >= limit passes
  LimitUnit unit;
};

const std::vector<ThresholdKind>& threshold_kinds();
const ThresholdKind* threshold_kind(std::string_view name);

}  // namespace qpo::scenario
