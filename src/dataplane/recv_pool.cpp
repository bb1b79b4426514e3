#include "dataplane/recv_pool.h"

#include "dataplane/error.h"
#include "dataplane/post.h"

namespace qpo::dataplane {

void RecvPool::layout(const Endpoint& ep, const LocalMr& mr, uint64_t offset, uint32_t slot_size, uint32_t count) {
  if (!mr.mr) usage_error(ep.qp_name, "receive MR is not registered");
  if (slot_size == 0 || count == 0) usage_error(ep.qp_name, "receive slots need a size and a count");
  if (offset + slot_size > mr.length)
    usage_error(ep.qp_name, "a " + std::to_string(slot_size) + "-byte receive slot at offset " +
                                std::to_string(offset) + " does not fit the " + std::to_string(mr.length) +
                                "-byte receive MR");
  uint32_t fits = static_cast<uint32_t>(std::min<uint64_t>((mr.length - offset) / slot_size, count));
  Generation g{mr.data + offset, mr.mr->lkey, slot_size, fits, fits < count};
  for (size_t i = 0; i < gens_.size(); ++i) {
    const Generation& old = gens_[i];
    if (old.base == g.base && old.lkey == g.lkey && old.slot_size == g.slot_size && old.count == g.count &&
        old.shared == g.shared) {
      current_ = i;  // the same layout: keep posting into it, with its own free slots
      return;
    }
  }
  if (gens_.size() >= 0x7FFF) usage_error(ep.qp_name, "too many receive layouts on one QP");
  g.free_all();
  gens_.push_back(std::move(g));
  current_ = gens_.size() - 1;
}

void RecvPool::Generation::free_all() {
  free.clear();
  next_shared = 0;
  // Slots are handed out lowest first; reversed so pop_back() yields slot 0 first.
  if (!shared)
    for (uint32_t s = count; s-- > 0;) free.push_back(s);
}

void RecvPool::fill(const Endpoint& ep, uint32_t target, uint32_t batch) {
  if (gens_.empty() || outstanding_ >= target) return;
  Generation& g = gens_[current_];
  uint64_t gen = current_;
  if (batch == 0) batch = 1;
  if (wrs_.size() < batch) {
    wrs_.resize(batch);
    sges_.resize(batch);
  }
  while (outstanding_ < target) {
    uint32_t n = 0;
    while (n < batch && outstanding_ + n < target) {
      uint32_t slot;
      if (g.shared) {
        slot = g.next_shared;
        g.next_shared = (g.next_shared + 1) % g.count;
      } else {
        if (g.free.empty()) break;  // every slot is posted: fewer receives than asked, never two per slot
        slot = g.free.back();
        g.free.pop_back();
      }
      sges_[n] = {reinterpret_cast<uintptr_t>(g.base) + static_cast<uint64_t>(slot) * g.slot_size, g.slot_size, g.lkey};
      wrs_[n] = {};
      wrs_[n].wr_id = kPoolRecvTag | gen << 32 | slot;
      wrs_[n].sg_list = &sges_[n];
      wrs_[n].num_sge = 1;
      wrs_[n].next = nullptr;
      if (n > 0) wrs_[n - 1].next = &wrs_[n];
      ++n;
    }
    if (n == 0) return;
    ibv_recv_wr* bad = nullptr;
    int e = ep.srq ? ibv_post_srq_recv(ep.srq, wrs_.data(), &bad) : ibv_post_recv(ep.qp, wrs_.data(), &bad);
    if (e) {
      // Return the slots of the WRs that were not posted, then report.
      size_t posted = bad ? static_cast<size_t>(bad - wrs_.data()) : 0;
      for (size_t i = posted; i < n && !g.shared; ++i) g.free.push_back(static_cast<uint32_t>(wrs_[i].wr_id));
      outstanding_ += static_cast<uint32_t>(posted);
      g.outstanding += static_cast<uint32_t>(posted);
      post_error(ep.qp_name, ep.srq ? "ibv_post_srq_recv" : "ibv_post_recv", e,
                 "(keeping " + std::to_string(target) + " receives posted)");
    }
    outstanding_ += n;
    g.outstanding += n;
  }
}

uint32_t RecvPool::outstanding_in(const uint8_t* base) const {
  uint32_t n = 0;
  for (const auto& g : gens_)
    if (g.base == base) n += g.outstanding;
  return n;
}

void RecvPool::forget_outstanding() {
  outstanding_ = 0;
  for (auto& g : gens_) {
    g.outstanding = 0;
    g.free_all();
  }
}

}  // namespace qpo::dataplane
