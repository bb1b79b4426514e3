#pragma once
// Runs the probe cases (probe/cases.h) on a live device: each case on a fresh QP driven into
// its current state with minimal valid masks, then the case's ibv_modify_qp, and for a value
// case ibv_query_qp after it: "ok" when stored as written, else "ok, reads back N" (truncated,
// rounded, or ignored). Every verbs object is an
// RAII owner from src/verbs, so a case that throws leaves nothing allocated.
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "probe/cases.h"

namespace qpo::probe {

struct Result {
  Case c;
  std::string answered;  // "ok", "EINVAL" (any errno name), "ok, reads back N", "cannot reach RTS (EINVAL)"
  bool agreed() const { return answered == c.predicted; }
};

struct Report {
  std::string device, provider, kernel, date;
  std::vector<Result> results;
  std::map<std::string, std::string> not_probed;  // QP type -> "unsupported by device: ..."
  double seconds = 0;
  size_t agreed() const;
};

struct Options {
  std::string device = "auto";
  uint8_t port = 1;
  // Called now and then with a line for stderr ("RC: 400 of 700 cases").
  std::function<void(const std::string&)> progress;
};

// Throws verbs::VerbsError when the device cannot be opened or a walk to a state fails.
Report run_probe(const Options& options);

}  // namespace qpo::probe
