#pragma once
// A script workload that spans hosts: the hosts meet through the run's Channel in rounds.
// Every active host takes part in every script workload, with or without workers in it, so
// no host can wait for one that skipped the workload. In each round every host sends one
// note (Channel::gather) and every host reads the same notes, so all decide alike:
//   ready    before the workers start: the receives each host still has to clear (drain)
//   barrier  a host's workers all reached w:barrier(tag) (sent by the last local worker)
//   done     a host's workers all ended, with their results (sent again each round until
//            every host is done, like a finished worker dropping out of a local barrier)
//   failed   a host's workload failed; it names the last barrier that host passed
// A round where anyone failed fails every host ("another host failed: host b after barrier
// 'write_bw 65536': ..."); hosts at different barrier tags fail alike ("hosts disagree ...").
// A host blocked in a round waits for the others' workers, whose streams and ping-pongs have
// their own timeouts; the phase timeout bounds every round (with agents the controller's,
// with --local the InProcessChannel's, which also stops the late host: exchange.h).
#include <map>
#include <string>
#include <vector>

#include "exec/exchange.h"
#include "lua/value.h"
#include "lua/workload.h"
#include "plan/qp_id.h"

namespace qpo::exec {

struct MeetingNote {
  std::string host, kind, tag, error;  // kind: ready | barrier | done | failed
  lua::Value data;                     // ready: {QP's plan id = receives to clear}; done: the workers' results
};

std::string encode_note(const MeetingNote& n);
MeetingNote decode_note(const std::string& text);  // throws std::runtime_error when malformed

// What one round means for `self`: "" = go on, else why this host's workload fails.
// Pure: the same notes give every host the same verdict (only the wording of "another host"
// differs for the host that failed itself).
std::string round_failure(const std::vector<MeetingNote>& notes, const std::string& self, const std::string& workload);

lua::Value encode_workers(const std::vector<lua::WorkerResult>& workers);
std::vector<lua::WorkerResult> decode_workers(const lua::Value& v);

class WorkloadMeeting {
 public:
  WorkloadMeeting(Channel& ch, std::string host, std::string workload)
      : ch_(ch), host_(std::move(host)), workload_(std::move(workload)) {}

  // Round 0: this host's receives to clear per QP (or its failure); returns every host's.
  // Throws on failure, like the others.
  std::map<plan::QpId, uint32_t> ready(const std::map<plan::QpId, uint32_t>& mine, const std::string& error);
  // The cross-host half of w:barrier(tag). Throws when another host failed or disagrees.
  void barrier(const std::string& tag);
  // This host's workers ended (`error` non-empty: the workload failed here). Returns every
  // host's workers' results once all are done; throws when any host failed.
  std::vector<lua::WorkerResult> finish(const std::vector<lua::WorkerResult>& mine, const std::string& error);
  // For a failure outside the workers (endpoints, script load): tells the others, if the
  // meeting is still open. Never throws.
  void fail(const std::string& error);

  bool closed() const { return closed_; }
  bool channel_failed() const { return channel_failed_; }

 private:
  std::vector<MeetingNote> round(MeetingNote mine);  // throws on failure; closes the meeting then

  Channel& ch_;
  std::string host_, workload_;
  std::string passed_;          // the last barrier tag this host passed
  bool closed_ = false, channel_failed_ = false;
  std::string failure_;         // why the meeting closed badly
};

}  // namespace qpo::exec
