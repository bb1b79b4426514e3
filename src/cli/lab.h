#pragma once
// The Soft-RoCE lab from the CLI: qpo re-runs itself inside the lab guest (scripts/lab/lab.sh),
// which sees this host's root file system, so the same binary and scenario paths work there.
#include <string>
#include <vector>

namespace qpo::cli {

// Path of scripts/lab/lab.sh: $QPO_LAB_SCRIPT, else the source tree qpo was built from.
std::string lab_script();
// Runs `qpo <args...>` in the lab; returns its exit code (124 timeout, 125 lab failure).
// `lab_args` go to lab.sh run before the command (e.g. {"--out", DIR} to keep files written there).
int run_in_lab(const std::vector<std::string>& qpo_args, const std::vector<std::string>& lab_args = {});

}  // namespace qpo::cli
