#pragma once
// qpo run --lab-peer CMD: a scenario against a stock tool (ibv_rc_pingpong, perftest, ucmatose)
// on "the other machine", in the two-guest Soft-RoCE lab (lab.sh run2):
//   guest a (10.0.1.1, fd00:1::1): `qpo run --no-lab ... FILE`, every host of the scenario
//   guest b (10.0.1.2, fd00:1::2): `sh -c CMD`, the peer
// rxe0 sits on eth0 in each guest; both commands start together once both guests are up.
// Guest a's lines read as qpo run's own. The peer's, stdout and stderr alike, come on stderr
// prefixed "[peer] ", so standard output stays qpo's report (JSON included). The peer serves
// qpo: its end never stops qpo, and once qpo ended it gets a grace time to finish (a peer that
// waits for a client qpo never was is stopped then, not at the lab's 600 s timeout).
#include <string>
#include <vector>

namespace qpo::cli {

// Seconds the peer may go on after qpo ended: enough for a tool to print its summary and for
// a TCG guest to power off, short enough that a peer that waits forever costs little.
inline constexpr int kLabPeerGraceSeconds = 20;

// One `qpo run --lab-peer` run.
struct LabPeerRun {
  std::string command;                // the peer's shell command line (--lab-peer)
  int grace_s = kLabPeerGraceSeconds;  // --lab-peer-grace
  std::vector<std::string> hosts;     // the scenario's active hosts
  bool local = false, agents = false;  // --local (every host in guest a), --agents
  std::vector<std::string> run_args;  // qpo run's options for guest a, without --no-lab and the file
  std::string scenario_file;
  std::vector<std::string> lab_args;  // to lab.sh run2, e.g. {"--out", DIR} for a report written in guest a
};

// Why the scenario cannot run with --lab-peer, or "" when it can: guest a holds all of qpo's
// hosts, so the scenario has one host (or --local puts them all there).
std::string lab_peer_problem(const LabPeerRun& run);

// Boots the two guests, runs qpo and the peer, and ends with a `lab peer: exit S: CMD` line on
// stderr. Returns qpo's exit code when qpo failed; when it passed, 0 if the peer exited 0,
// 125 if the lab failed in guest b, else 1 (the peer failed, or was still running after the
// grace time). 2 when the run cannot start (lab_peer_problem, no lab script).
int run_with_lab_peer(const LabPeerRun& run);

}  // namespace qpo::cli
