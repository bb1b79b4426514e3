#pragma once
// The Soft-RoCE lab from the CLI: qpo re-runs itself inside the lab guest (scripts/lab/lab.sh),
// which sees this host's root file system, so the same binary and scenario paths work there.
#include <string>
#include <vector>

namespace qpo::cli {

// Where lab.sh may be, in the order looked at: $QPO_LAB_SCRIPT alone when set; else beside an
// installed qpo (PREFIX/share/qpo/lab/lab.sh for PREFIX/bin/qpo), then in the source tree qpo
// was built from (scripts/lab/lab.sh).
std::vector<std::string> lab_script_places();
// The first of them that is there and executable (the first of all when none is).
std::string lab_script();
// Whether a command runs in the lab: --lab, or (unless --no-lab) this host has no RDMA device,
// which it says on stderr ("...; <doing> in the Soft-RoCE lab (use --no-lab to refuse)").
bool use_lab(bool lab, bool no_lab, const std::string& doing);
// With --no-lab, a command that opens this host's devices says first when there are none.
void say_if_no_device(const std::string& doing);
// Runs `qpo <args...>` in the lab; returns its exit code (124 timeout, 125 lab failure).
// `lab_args` go to lab.sh run before the command (e.g. {"--out", DIR} to keep files written there).
int run_in_lab(const std::vector<std::string>& qpo_args, const std::vector<std::string>& lab_args = {});
// Runs `lab.sh run2 <lab_args...> --cmd-a A --cmd-b B` (two guests, shell commands); returns
// its exit code (the failing guest's, a before b; 124 timeout, 125 lab failure).
int run_in_lab2(const std::string& cmd_a, const std::string& cmd_b, const std::vector<std::string>& lab_args = {});
// This qpo binary's path (/proc/self/exe), or "" when it cannot be found.
std::string self_path();

}  // namespace qpo::cli
