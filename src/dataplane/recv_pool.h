#pragma once
// Receive buffers kept posted on a QP's RQ (or an SRQ) by the data path's loops. The pool
// outlives one stream: receives a stream leaves posted are still there for the next call, so
// the pool remembers every buffer layout it has posted with (a "generation") and each wr_id
// says which layout and slot it refers to. Going back to a layout used before (the executor's
// slots after a script's MR) goes back to that generation and its free slots, so no slot ever
// has two receives posted into it.
//
// wr_id = kPoolRecvTag | generation << 32 | slot.
#include <infiniband/verbs.h>

#include <cstdint>
#include <string>
#include <vector>

#include "dataplane/endpoint.h"
#include "dataplane/post.h"  // kPoolRecvTag

namespace qpo::dataplane {

class RecvPool {
 public:
  // Posts go to `count` slots of `slot_size` bytes from mr->data + offset. With count < the
  // number of receives kept posted, slots are shared (perftest does this: every receive lands
  // in the same buffer), which rules out data checks. Throws Usage when the range is outside the MR.
  void layout(const Endpoint& ep, const LocalMr& mr, uint64_t offset, uint32_t slot_size, uint32_t count);
  // Posts receives until `target` are outstanding, in chains of up to `batch`.
  void fill(const Endpoint& ep, uint32_t target, uint32_t batch = 32);
  // A receive completed: the start of its buffer, or nullptr when the id is not the pool's.
  // Its slot goes back to the free list; call fill() to repost. Inline (below).
  [[gnu::always_inline]] inline const uint8_t* complete(uint64_t wr_id);
  // After a flush (QP in ERR) or RESET: every outstanding receive is gone, and its slot is
  // free again (else a later fill() would find no slot and post nothing).
  void forget_outstanding();

  uint32_t outstanding() const { return outstanding_; }
  // Of those, the receives posted into layouts that start at `base` (the executor's own slot
  // buffer, say, as opposed to a script's MR).
  uint32_t outstanding_in(const uint8_t* base) const;
  uint32_t slot_size() const { return gens_.empty() ? 0 : gens_[current_].slot_size; }
  bool shared_slots() const { return !gens_.empty() && gens_[current_].shared; }

 private:
  struct Generation {
    uint8_t* base = nullptr;
    uint32_t lkey = 0;
    uint32_t slot_size = 0, count = 0;
    bool shared = false;
    uint32_t outstanding = 0;
    std::vector<uint32_t> free;  // its slots with no receive posted (unless shared)
    uint32_t next_shared = 0;
    void free_all();
  };
  std::vector<Generation> gens_;
  size_t current_ = 0;  // the layout fill() posts into
  uint32_t outstanding_ = 0;
  std::vector<ibv_recv_wr> wrs_;
  std::vector<ibv_sge> sges_;
};

// Always inlined: the latency loops call it on their critical path (between noticing a
// message and answering it), where a call and its return cost two lookups on the lab's
// emulated CPU.
inline const uint8_t* RecvPool::complete(uint64_t wr_id) {
  if (!(wr_id & kPoolRecvTag)) return nullptr;
  uint64_t gen = (wr_id >> 32) & 0x7FFF;
  uint32_t slot = static_cast<uint32_t>(wr_id);
  if (gen >= gens_.size() || slot >= gens_[gen].count) return nullptr;
  if (outstanding_) --outstanding_;
  Generation& g = gens_[gen];
  if (g.outstanding) --g.outstanding;
  if (!g.shared) g.free.push_back(slot);
  return g.base + static_cast<uint64_t>(slot) * g.slot_size;
}

}  // namespace qpo::dataplane
