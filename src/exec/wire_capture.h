#pragma once
// A host's packet capture for `qpo run --capture DIR` (plan steps Capture and CaptureEnd): one
// wire::LiveCapture per netdev its devices send through, started before the first QP is made
// and stopped before the first object is destroyed; at the stop the run's QPs (names, numbers,
// GIDs, every host's from the directory) go beside each file for `qpo packets`.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "exec/run_state.h"
#include "plan/plan.h"
#include "wire/pcap_io.h"

namespace qpo::exec {

class WireCaptures {
 public:
  // Starts the captures of `step` (plan::StepKind::Capture) into `dir`, a line per netdev.
  // A capture that cannot start fails the run (its line says why: no permission, no netdev).
  // An empty `dir`: a temporary directory, removed with this object (the run only reads them).
  void start(RunState& st, report::RunReport& log, const plan::Step& step, const std::string& dir);
  // Stops them (plan step `end_step`, CaptureEnd), a line per file with its packet count,
  // then checks this host's `wire: expect:` entries against the files, a line each; a fact
  // that is not as expected fails the run with the measured and the expected value.
  void stop(RunState& st, report::RunReport& log, const plan::Plan& plan, int end_step);
  ~WireCaptures();

 private:
  void check_expectations(RunState& st, report::RunReport& log, const plan::Plan& plan, int end_step);
  // The packets of each local QP a `wire:` entry names, with its peer, into log.wire.
  void record_sequences(RunState& st, report::RunReport& log, const plan::Plan& plan);
  const wire::PcapRead& read(const std::string& path);
  std::map<std::string, wire::PcapRead> reads_;  // by file, read once after the stop
  std::vector<std::unique_ptr<wire::LiveCapture>> live_;
  std::string dir_;
  bool temporary_ = false;  // no --capture: the files live in a directory of qpo's until the run ends
  std::vector<std::string> files_;
  std::map<std::string, uint64_t> missed_;  // by file: packets the kernel dropped before the capture read them
};

// Why this host's packet events or wire expectations cannot work, after the exchange: a QP
// and its peer on one device (the same GID: `--local` put both hosts on this machine's one
// device), whose packets never reach a netdev. "" when they can.
std::string wire_unsupported_reason(const RunState& st, const report::RunReport& log, const plan::Plan& plan);

// DIR/SCENARIO.HOST.NETDEV.pcap
std::string capture_path(const std::string& dir, const std::string& scenario, const std::string& host, const std::string& netdev);

}  // namespace qpo::exec
