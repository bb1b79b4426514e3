#pragma once
// The workers' barrier. Unlike std::barrier it can be broken (a worker failed: everyone
// waiting gets an error instead of waiting forever) and a finished worker drops out, so a
// script whose roles call w:barrier() a different number of times cannot deadlock.
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>

namespace qpo::lua {

class Barrier {
 public:
  explicit Barrier(int parties = 0) : parties_(parties) {}
  void reset(int parties) { parties_ = parties; }
  // Blocks until every remaining party arrived. The last to arrive runs `leader` (the
  // executor's cross-host barrier) before releasing the others. Throws std::runtime_error
  // when broken, or when waiting longer than timeout_ms (< 0: no limit). When given,
  // `progressed` is asked each time timeout_ms passes: true (the workload's streams completed
  // work since it was last asked) waits another timeout_ms. A party still moving data (a long
  // stream, or the drain of 64 QPs' queues after a timed run) is late, not lost. While the
  // leader is in its cross-host wait (every party here arrived), the others wait for it.
  void arrive_and_wait(const std::string& tag, const std::function<void()>& leader, int timeout_ms,
                       const std::function<bool()>& progressed = {});
  // A party that finished: the others no longer wait for it.
  void drop();
  void break_barrier(const std::string& why);

 private:
  std::mutex m_;
  std::condition_variable cv_;
  int parties_ = 0, arrived_ = 0;
  bool leader_busy_ = false;  // every party arrived; the leader is in its cross-host wait
  uint64_t generation_ = 0;
  std::string broken_;
};

}  // namespace qpo::lua
