#pragma once
// The out-of-band exchange: what each host publishes about its QPs and MRs before RTR, and
// the Channel through which host sessions meet (exchange + barriers). In one process the
// channel is shared memory between threads (InProcessChannel); across machines it is the
// agent protocol (src/cluster).
#include <array>
#include <atomic>
#include <chrono>
#include <compare>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "plan/buffer_key.h"

namespace qpo::exec {

struct RemoteQp {
  std::string host, type;
  uint32_t qpn = 0, sq_psn = 0, qkey = 0;
  uint16_t lid = 0;
  std::array<uint8_t, 16> gid{};
  uint8_t active_mtu = 0;  // enum ibv_mtu
  uint8_t port = 1;
  uint32_t slots_count = 0;  // receive slots the peer can aim at (smoke/RDMA)
  uint32_t slot_size = 0;
};

struct RemoteMr {
  std::string host;
  uint64_t addr = 0, length = 0;
  uint32_t rkey = 0;
};

// A directory MR's key: what the buffer is and its id in the plan. A scenario MR by its id
// (plan::ObjectKind::Mr), a QP's slot buffer by its QP's id, a bound memory window by its id,
// an external peer's buffer by its place in plan::Plan::externals. exec/directory_names.h
// says each one's name (what scripts and messages use); the planner finds the key of a name
// (plan/buffer_key.h).
using MrKey = plan::BufferKey;  // an MR entry: a scenario MR, a slot buffer, a window, an external's

// Everything published so far, by id: every host plans the same file, so ids agree. QPs by
// their peer id: a scenario QP's id, or the plan's QP count + an external peer's index
// (plan::Plan::peer_id); MRs by MrKey.
struct Directory {
  std::map<uint32_t, RemoteQp> qps;
  std::map<MrKey, RemoteMr> mrs;
  // Takes every entry of `other` (moved, not copied); a name both have keeps other's value.
  void merge(Directory&& other);
};

// A host told by its channel to stop (the run's phase timeout found it late). `why` is
// written once, before `requested` turns true; read it only after seeing the flag.
struct StopRequest {
  std::atomic<bool> requested{false};
  std::string why;
};

class Channel {
 public:
  virtual ~Channel() = default;
  // Publishes `mine`; returns the union of every host's directory once all have published.
  // `ok` false means this host failed before the exchange; then every host gets `false` back.
  // `mine` is taken by value: a channel may move its entries rather than copy them (the
  // exchange sits inside the timed bring-up window).
  virtual bool exchange(Directory mine, bool ok, Directory* all) = 0;
  // Every host reaches `name`; returns false if any host arrived with ok=false (or died):
  // then all hosts stop and tear down. Hosts call barriers in the same order.
  virtual bool barrier(const std::string& name, bool ok) = 0;
  // Every host sends one note for the meeting `name` and gets every host's notes back (in
  // no set order: a note names its host): the rounds of a script workload that spans hosts (workload_meeting.h).
  // False when the channel failed, a host died, or a host arrived at a different meeting or
  // at a stage barrier instead: then the run is out of step and every host tears down.
  virtual bool gather(const std::string& name, const std::string& note, std::vector<std::string>* notes) = 0;
  // The w:signal() counters of script workload `workload` across hosts: adds this host's
  // increments (`add`) and returns every host's totals, ours included. Never waits for
  // another host, so a worker can call it while others meet. False when the channel cannot
  // answer now (busy with a round, or failed): the caller keeps `add` for its next call.
  virtual bool signals(const std::string& workload, const std::map<std::string, int64_t>& add,
                       std::map<std::string, int64_t>* totals) = 0;
  // Why the channel failed, when it knows and it was not a host saying ok=false ("host b: no
  // answer within 5 s during the stage after 'smoke'"); "" otherwise.
  virtual std::string failure() const { return ""; }
  // This host's stop request from the channel, or nullptr when the channel never makes one.
  virtual const StopRequest* stop_request() const { return nullptr; }
  // Why this host failed ("host b failed at step 14 (ibv_modify_qp, qb): ..."), said before it
  // arrives with ok=false: a channel that can (the agents') tells the other hosts at once.
  virtual void note_failure(const std::string& /*note*/) {}
};

// Host sessions as threads of one process. Anonymous (InProcessChannel(n): every caller
// uses the channel itself, nobody times out), or with named hosts and a phase timeout: each
// host then uses its own member(i). A round not complete within the phase timeout of the
// previous one (like the agents' controller) fails for every host: the hosts that waited
// return false and failure() names the late ones and what they were doing; each late host's
// stop_request() turns true, so its session and script workers stop and tear down.
// A host that fails says why (note_failure, before it arrives with ok=false): every other
// host still at work is stopped at once with "aborted: <its note>" (as the agents'
// controller does), and the round's failure() is that note for the hosts waiting at it.
class InProcessChannel : public Channel {
 public:
  explicit InProcessChannel(int hosts);
  // phase_timeout <= 0: no limit.
  InProcessChannel(std::vector<std::string> hosts, std::chrono::milliseconds phase_timeout);
  ~InProcessChannel() override;
  bool exchange(Directory mine, bool ok, Directory* all) override;
  bool barrier(const std::string& name, bool ok) override;
  bool gather(const std::string& name, const std::string& note, std::vector<std::string>* notes) override;
  bool signals(const std::string& workload, const std::map<std::string, int64_t>& add,
               std::map<std::string, int64_t>* totals) override;
  std::string failure() const override;

  // Host i's view of the channel (named hosts).
  Channel& member(size_t i);
  // Fails the current round if it is overdue. Waiting hosts check this themselves; the
  // run calls it too, for a round where every host is busy (all hung) and nobody waits.
  void check_deadline();

 private:
  class Member;
  // A reusable generation barrier carrying an AND of everyone's ok, the directories, and the
  // notes of a gather. `meeting` is "" for the exchange and stage barriers; `stage` names
  // the round for the phases (what a host is doing after it).
  bool arrive(int who, const std::string& stage, bool ok, Directory* mine, Directory* all,
              const std::string& meeting = "", const std::string* note = nullptr,
              std::vector<std::string>* notes = nullptr);
  void expire_locked();  // the round is overdue: fail it, stop the late hosts
  void abort_others(int who, const std::string& note);  // host `who` failed: stop the busy ones

  int hosts_;
  std::vector<std::string> names_;
  std::chrono::milliseconds timeout_{0};
  std::vector<std::unique_ptr<Member>> members_;
  std::vector<std::unique_ptr<StopRequest>> stops_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  int arrived_ = 0;
  uint64_t generation_ = 0;
  bool all_ok_ = true, last_ok_ = true;
  Directory pending_, last_dir_;
  std::string meeting_;              // what the first host of this round arrived at
  std::vector<std::string> pending_notes_, last_notes_;
  std::chrono::steady_clock::time_point round_start_;
  std::vector<bool> here_;           // named hosts in the current round
  std::vector<std::string> phase_;   // what each named host is doing since its last round
  std::string failure_;              // set once the phase timeout failed a round: for good
  std::string first_note_;           // the first failing host's note (note_failure)
  std::map<std::string, std::map<std::string, int64_t>> signals_;  // workload -> name -> total
};

}  // namespace qpo::exec
