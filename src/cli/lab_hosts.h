#pragma once
// A multi-host scenario in the Soft-RoCE lab: each host in its own guest of `lab.sh run2`,
// the two guests joined by the lab's link (rxe0 on each guest's eth0), so traffic between
// the hosts really crosses a netdev (faults apply, rdma_cm resolves addresses).
//   guest a: `qpo run` (the controller) with host A's agent as its local child
//   guest b: `qpo agent --listen [::]:7000` for host B, with a token made for this run
// The scenario's `address:` values say how to reach hosts outside the lab; in the lab they
// are replaced (`--set hosts.A.address=localhost`, `--set hosts.B.address=tcp://[fd00:1::2]:7000`),
// and the run says so on stderr and in its report's overrides.
#include <string>
#include <vector>

#include "scenario/model.h"

namespace qpo::cli {

// The guests of lab.sh run2 and their addresses (scripts/lab/README.md).
struct LabGuest {
  const char* name;  // "a", "b"
  const char* ip4;
  const char* ip6;
};
inline constexpr LabGuest kLabGuests[] = {{"a", "10.0.1.1", "fd00:1::1"}, {"b", "10.0.1.2", "fd00:1::2"}};
inline constexpr int kLabAgentPort = 7000;

// The two guests' shell commands for one run.
struct GuestCommands {
  std::string a, b;
  std::vector<std::string> overrides;  // the address --set flags guest a's qpo run gets
};

// `hosts`: the scenario's active hosts in order (exactly two); `run_args`: qpo run's options
// for guest a (without --no-lab, --token-file and the file); `self`: the qpo binary;
// `cm_addresses`: lab_cm_addresses' flags, which follow the hosts' address flags.
GuestCommands lab_guest_commands(const std::vector<std::string>& hosts, const std::string& self,
                                 const std::vector<std::string>& run_args, const std::string& token_file,
                                 const std::string& scenario_file, const std::vector<std::string>& cm_addresses = {});

// An active rdma_cm QP without `address:` connects to its passive host's `address:` (check/cm.cpp),
// which the lab replaces (`localhost`, an agent's tcp:// address): each gets the IP of the guest
// its passive host runs in instead, IPv6 when its default was, as `qps.Q.cm.address=IP` (a cm:
// QP has no count:, so Q is its name in the file). `checked`: the validated scenario.
std::vector<std::string> lab_cm_addresses(const scenario::Scenario& checked, const std::vector<std::string>& hosts);

// Why `hosts` cannot run one per guest, or "" when they can (the lab has two guests).
std::string lab_hosts_problem(const std::vector<std::string>& hosts);

// Runs `qpo run` for a scenario with two active hosts across the two lab guests; returns the
// exit code (guest a's, the controller's; 124 timeout, 125 lab failure, 2 when it cannot start).
// `addresses`: the scenario's address per host, for the log line; `lab_args` go to lab.sh run2
// (e.g. {"--out", DIR} for a report file written in guest a).
int run_hosts_in_lab(const std::vector<std::string>& hosts, const std::vector<std::string>& addresses,
                     const std::vector<std::string>& run_args, const std::string& scenario_file,
                     const std::vector<std::string>& lab_args = {}, const std::vector<std::string>& cm_addresses = {});

// POSIX shell single quoting: 'it'\''s'.
std::string shell_quote(const std::string& s);
// Words as one shell command line, each quoted.
std::string shell_words(const std::vector<std::string>& words);

}  // namespace qpo::cli
