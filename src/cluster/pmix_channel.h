#pragma once
// A run under a cluster's own launcher (mpirun, srun --mpi=pmix): every rank is one host of the
// scenario and the hosts meet through PMIx, the launcher's out-of-band store, instead of qpo's
// controller and agents. A meeting is one round: each rank puts its part under the round's key
// (PMIx_Put, PMIx_Commit), PMIx_Fence with PMIX_COLLECT_DATA brings every rank's part to every
// rank, and each reads the others' with PMIx_Get. The exchange, the barriers, the script
// workloads' meetings and the final reports are such rounds. A rank that fails says why at
// once, as a PMIx event (PMIx_Notify_event) to the ranks on its node: their sessions stop where
// they are ("aborted: host b failed at step 14 ...") and tear down, as under qpo's controller;
// ranks on other nodes read it in the next round (note_failure says why not job-wide).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cluster/codec.h"

#include "exec/exchange.h"

namespace qpo::cluster {

// This process as a PMIx client: PMIx_Init when made, PMIx_Finalize when destroyed.
class PmixClient {
 public:
  // nullptr (with `why`) when this process was not started by a PMIx launcher.
  static std::unique_ptr<PmixClient> connect(std::string* why);
  ~PmixClient();
  PmixClient(const PmixClient&) = delete;
  PmixClient& operator=(const PmixClient&) = delete;

  uint32_t rank() const { return rank_; }
  const std::string& nspace() const { return nspace_; }
  uint32_t size() const { return size_; }
  // Puts `value` under `key`, commits and fences with every rank, collecting every rank's data
  // (at most timeout_s seconds; 0: no limit). False with `why` when a step fails.
  bool publish(const std::string& key, const std::string& value, int timeout_s, std::string* why);
  // Rank `rank`'s value of `key`, published before the last fence.
  bool read(uint32_t rank, const std::string& key, std::string* value, std::string* why);
  // publish, then every rank's value of `key` into `values` (index: rank).
  bool all_gather(const std::string& key, const std::string& value, int timeout_s, std::vector<std::string>* values,
                  std::string* why);

 private:
  PmixClient() = default;
  std::string nspace_;
  uint32_t rank_ = 0, size_ = 0;
};

// The Channel of one rank's host session over PMIx rounds.
class PmixChannel : public exec::Channel {
 public:
  // `hosts[r]` is rank r's host; `timeout_s` bounds each round (the run's meeting timeout).
  // One channel per process at a time (the event handler finds it through a static).
  PmixChannel(PmixClient& client, std::vector<std::string> hosts, int timeout_s);
  ~PmixChannel() override;
  PmixChannel(const PmixChannel&) = delete;  // (the destructor is the .cpp's: PmixNotice)
  PmixChannel& operator=(const PmixChannel&) = delete;
  bool exchange(exec::Directory mine, bool ok, exec::Directory* all) override;
  bool barrier(const std::string& name, bool ok) override;
  bool gather(const std::string& name, const std::string& note, std::vector<std::string>* notes) override;
  // w:signal() counters across hosts need a store that answers without a meeting: not over
  // PMIx fences. False: the caller keeps its increments (a script sees only its own host's).
  bool signals(const std::string&, const std::map<std::string, int64_t>&, std::map<std::string, int64_t>*) override {
    return false;
  }
  std::string failure() const override { return failure_; }
  const exec::StopRequest* stop_request() const override { return &stop_; }
  // Kept for the next round's part, and sent now to the ranks on this node (the event).
  void note_failure(const std::string& note) override;

  // The ranks' final reports (each a "report" message, cluster/codec.h) in one more round: rank
  // 0 gets all of them (index: rank), the others none (`all` empty).
  bool gather_reports(const std::string& mine, std::vector<std::string>* all);
  // The ranks' last fence, once rank 0 has printed: a rank that exits non-zero makes mpirun
  // kill the rest of the job, so none leaves before rank 0 is done.
  void last_meeting();

 private:
  // One round: this rank's `kind`, ok flag, note and payload out; every rank's back. False
  // (failure() says why) when the round failed, a rank was not ok, or ranks were at different
  // meetings.
  struct Part {
    std::string kind, note;
    bool ok = true;
    Message payload;  // the JSON the rank sent, parsed
  };
  bool round(const std::string& kind, bool ok, const std::string& payload, std::vector<Part>* parts);

  PmixClient& client_;
  std::vector<std::string> hosts_;
  int timeout_s_;
  uint64_t rounds_ = 0;
  bool fence_failed_ = false;  // a fence failed or timed out here: the ranks' fences may be out of step
  std::string note_, failure_;
  exec::StopRequest stop_;       // another rank's abort event sets it
  // This rank's abort event, alive until the channel goes: PMIx sends it after note_failure returns.
  std::unique_ptr<struct PmixNotice> notice_;
  size_t handler_ = 0;           // the event handler's registration
  bool handler_registered_ = false;
  friend struct PmixEvents;
};

}  // namespace qpo::cluster
