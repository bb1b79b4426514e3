#pragma once
// Waiting for a specific completion on a CQ that several QPs share: completions for other
// work requests are kept until someone asks for them.
#include <infiniband/verbs.h>

#include <cstdint>
#include <deque>
#include <map>
#include <chrono>
#include <optional>
#include <thread>

#include "dataplane/names.h"

namespace qpo::exec {

class Completions {
 public:
  // Polls `cq` until the completion for `wr_id` arrives or `timeout_ms` passes.
  std::optional<ibv_wc> wait(ibv_cq* cq, uint64_t wr_id, int timeout_ms);
  // Any completion on `cq` whose wr_id satisfies (wr_id & mask) == tag.
  std::optional<ibv_wc> wait_tagged(ibv_cq* cq, uint64_t mask, uint64_t tag, int timeout_ms);
  // The first completion on `cq` for which pred(wc) holds.
  template <typename Pred>
  std::optional<ibv_wc> wait_if(ibv_cq* cq, Pred pred, int timeout_ms);
  // Non-blocking: polls `cq` once and returns the first stashed completion matching `pred`.
  template <typename Pred>
  std::optional<ibv_wc> try_take(ibv_cq* cq, Pred pred);
  // Completions for QP `qp_num` that arrive within `settle_ms` (after a move to ERR: the
  // flushed WRs); completions of other QPs stay stashed.
  std::deque<ibv_wc> drain(ibv_cq* cq, uint32_t qp_num, int settle_ms);
  void forget(ibv_cq* cq) { stash_.erase(cq); }

 private:
  std::map<ibv_cq*, std::deque<ibv_wc>> stash_;
};

template <typename Pred>
std::optional<ibv_wc> Completions::wait_if(ibv_cq* cq, Pred pred, int timeout_ms) {
  auto& stash = stash_[cq];
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    for (auto it = stash.begin(); it != stash.end(); ++it)
      if (pred(*it)) {
        ibv_wc wc = *it;
        stash.erase(it);
        return wc;
      }
    ibv_wc wcs[16];
    int n = ibv_poll_cq(cq, 16, wcs);
    if (n < 0) return std::nullopt;
    for (int i = 0; i < n; ++i) stash.push_back(wcs[i]);
    if (n > 0) continue;
    if (std::chrono::steady_clock::now() > deadline) return std::nullopt;
    std::this_thread::yield();  // rxe completes from kernel work; let it run on a small guest
  }
}

template <typename Pred>
std::optional<ibv_wc> Completions::try_take(ibv_cq* cq, Pred pred) {
  auto& stash = stash_[cq];
  ibv_wc wcs[32];
  int n = ibv_poll_cq(cq, 32, wcs);
  for (int i = 0; i < n; ++i) stash.push_back(wcs[i]);
  for (auto it = stash.begin(); it != stash.end(); ++it)
    if (pred(*it)) {
      ibv_wc wc = *it;
      stash.erase(it);
      return wc;
    }
  return std::nullopt;
}

// IBV_WC_SUCCESS, IBV_WC_REM_ACCESS_ERR, ...: the data path's table (dataplane/names.h), so
// reports, scenario expectations and Lua spell them alike.
using dataplane::wc_status_name;
const char* event_name(int event_type);

// wr_id layout: [63:48] kind, [47:32] qp ordinal, [31:0] sequence.
enum class WrKind : uint64_t { Smoke = 1, SmokeRecv = 2, Work = 3, WorkRecv = 4 };
inline uint64_t make_wr_id(WrKind kind, uint32_t qp, uint32_t seq) {
  return (static_cast<uint64_t>(kind) << 48) | (static_cast<uint64_t>(qp & 0xFFFF) << 32) | seq;
}

}  // namespace qpo::exec
