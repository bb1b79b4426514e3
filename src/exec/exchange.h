#pragma once
// The out-of-band exchange: what each host publishes about its QPs and MRs before RTR, and
// the Channel through which host sessions meet (exchange + barriers). In one process the
// channel is shared memory between threads (InProcessChannel); across machines it is the
// agent protocol (src/cluster).
#include <array>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

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

// Everything published so far, by scenario name. Slot buffers appear as "qpo.slots.<qp>".
struct Directory {
  std::map<std::string, RemoteQp> qps;
  std::map<std::string, RemoteMr> mrs;
  // Takes every entry of `other` (moved, not copied); a name both have keeps other's value.
  void merge(Directory&& other);
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
};

// Host sessions as threads of one process.
class InProcessChannel : public Channel {
 public:
  explicit InProcessChannel(int hosts) : hosts_(hosts) {}
  bool exchange(Directory mine, bool ok, Directory* all) override;
  bool barrier(const std::string& name, bool ok) override;
  bool gather(const std::string& name, const std::string& note, std::vector<std::string>* notes) override;

 private:
  // A reusable generation barrier carrying an AND of everyone's ok, the directories, and the
  // notes of a gather. `meeting` is "" for the exchange and stage barriers.
  bool arrive(bool ok, Directory* mine, Directory* all, const std::string& meeting = "",
              const std::string* note = nullptr, std::vector<std::string>* notes = nullptr);

  int hosts_;
  std::mutex mu_;
  std::condition_variable cv_;
  int arrived_ = 0;
  uint64_t generation_ = 0;
  bool all_ok_ = true, last_ok_ = true;
  Directory pending_, last_dir_;
  std::string meeting_;              // what the first host of this round arrived at
  std::vector<std::string> pending_notes_, last_notes_;
};

}  // namespace qpo::exec
