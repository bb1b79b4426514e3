#include "cli/lab_peer.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/commands.h"
#include "cli/lab.h"
#include "cli/lab_hosts.h"
#include "util/strings.h"

namespace qpo::cli {

namespace {

constexpr int kLabFailed = 125;  // lab.sh: the lab failed (boot, rxe, missing tools)

// How one guest's command ended, as lab.sh run2 --status-file writes it: "b 3 exit".
struct GuestOutcome {
  int code = kLabFailed;
  std::string how;  // exit (the command's own status), timeout, stopped, lab; "" when unknown
};

// Reads the a and b lines of lab.sh's status file; false when it is missing or incomplete
// (lab.sh ended before both guests had an outcome: a usage error, no kernel).
bool read_status(const std::string& file, GuestOutcome* a, GuestOutcome* b) {
  std::ifstream in(file);
  std::string line;
  int found = 0;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string name;
    GuestOutcome o;
    if (!(words >> name >> o.code >> o.how)) continue;
    if (name == "a") {
      *a = o;
      found |= 1;
    } else if (name == "b") {
      *b = o;
      found |= 2;
    }
  }
  return found == 3;
}

// The closing line about the peer: how it ended, then its command.
std::string peer_line(const GuestOutcome& peer, int grace_s, const std::string& command) {
  std::string what;
  if (peer.how == "exit")
    what = "exit " + std::to_string(peer.code);
  else if (peer.how == "stopped")
    what = "stopped, still running " + std::to_string(grace_s) + " s after qpo ended (--lab-peer-grace)";
  else if (peer.how == "timeout")
    what = "timed out (the lab's timeout, exit " + std::to_string(peer.code) + ")";
  else
    what = "the lab failed in guest b (exit " + std::to_string(peer.code) + ")";
  return "lab peer: " + what + ": " + util::printable(command, 1000);
}

// A qpo that failed speaks for the run; one that passed is undone by a peer that did not.
int run_exit_code(int qpo_code, const GuestOutcome& peer) {
  if (qpo_code != 0) return qpo_code;
  if (peer.how == "exit" && peer.code == 0) return kOk;
  if (peer.how == "lab") return kLabFailed;
  return kInvalid;
}

}  // namespace

std::string lab_peer_problem(const LabPeerRun& run) {
  if (run.scenario_file == "-")
    return "--lab-peer runs the scenario in a lab guest, which cannot read it from standard input; give a file";
  if (run.local || run.hosts.size() <= 1) return "";
  std::string names;
  for (const auto& h : run.hosts) names += (names.empty() ? "" : ", ") + util::printable(h, 200);
  return "--lab-peer runs the scenario in lab guest a and the peer command in guest b, so the scenario must "
         "have one host; it has " + std::to_string(run.hosts.size()) + " (" + names + "). Give --local to run "
         "every host in guest a on its rxe0, or drop --lab-peer to run one host per guest";
}

int run_with_lab_peer(const LabPeerRun& run) {
  if (auto why = lab_peer_problem(run); !why.empty()) {
    std::cerr << "qpo: " << why << "\n";
    return kSystemError;
  }
  std::string self = self_path();
  if (self.empty()) {
    std::cerr << "qpo: cannot find my own binary for the lab\n";
    return kSystemError;
  }
  // lab.sh writes both guests' outcomes here (its exit code carries only one).
  char dir_template[] = "/tmp/qpo-lab-peer.XXXXXX";
  const char* dir = mkdtemp(dir_template);
  if (!dir) {
    std::cerr << "qpo: cannot create a temporary directory for the lab's outcome\n";
    return kSystemError;
  }
  std::string status_file = std::string(dir) + "/status";
  std::vector<std::string> a{self, "run", "--no-lab"};
  a.insert(a.end(), run.run_args.begin(), run.run_args.end());
  if (run.local) a.push_back("--local");
  if (run.agents) a.push_back("--agents");
  a.push_back(run.scenario_file);
  // The peer's stdout joins its stderr: qpo's standard output stays the report.
  std::string b = "exec sh -c " + shell_quote(run.command) + " >&2";
  const auto& ga = kLabGuests[0];
  const auto& gb = kLabGuests[1];
  std::cerr << "qpo: --lab-peer: the scenario runs in lab guest " << ga.name << " (" << ga.ip4 << ", " << ga.ip6
            << "), the peer command in guest " << gb.name << " (" << gb.ip4 << ", " << gb.ip6
            << "), rxe0 on eth0 in each; the peer's lines come on stderr as [peer], and it may run "
            << run.grace_s << " s after qpo ends\n";
  std::vector<std::string> lab{"--plain-a", "--prefix-b", "[peer] ", "--grace-b", std::to_string(run.grace_s),
                               "--status-file", status_file};
  lab.insert(lab.end(), run.lab_args.begin(), run.lab_args.end());
  int lab_code = run_in_lab2("exec " + shell_words(a), b, lab);
  GuestOutcome qpo, peer;
  bool known = read_status(status_file, &qpo, &peer);
  std::filesystem::remove_all(dir);
  if (!known) {
    std::cerr << "lab peer: no outcome, the lab ended first (exit " << lab_code
              << "): " << util::printable(run.command, 1000) << "\n";
    return lab_code != 0 ? lab_code : kLabFailed;
  }
  std::cerr << peer_line(peer, run.grace_s, run.command) << "\n";
  int code = run_exit_code(qpo.code, peer);
  if (qpo.code == 0 && code != 0)
    std::cerr << "qpo: the scenario passed and the lab peer did not: exit " << code << "\n";
  return code;
}

}  // namespace qpo::cli
