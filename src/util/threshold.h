#pragma once
// A workload's `thresholds:` entry: the loader reads it (scenario/), the planner hands it to
// the run (plan::WorkloadParams), exec judges a workload's summary against it.
#include <string>

#include "util/source_text.h"

namespace qpo::util {

struct Threshold {
  std::string name;      // min_bw
  std::string field;     // bw_avg
  bool minimum = true;   // min_*: measured >= limit passes; max_*: measured <= limit passes
  double limit = 0;      // in the summary field's own unit (MB/s, Mpps, usec, a fraction for loss)
  std::string unit;      // for messages: MB/s, Mpps, usec, %
  double display_scale = 1;  // field value x this = the value in `unit` (loss: 100)
  std::string text;      // as written: "40MB/s"
  SourceLoc loc;         // the value
};

}  // namespace qpo::util
