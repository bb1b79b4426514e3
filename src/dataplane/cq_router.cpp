#include "dataplane/cq_router.h"

#include <atomic>

namespace qpo::dataplane {

struct CqRouter::Shared {
  ibv_cq* cq = nullptr;
  std::mutex mutex;
  std::map<uint32_t, int> owner_of;                 // qp_num -> owner
  std::map<int, std::deque<ibv_wc>> queued;         // owner -> completions not yet taken
  std::atomic<uint64_t> dropped{0};
};

CqRouter::CqRouter() = default;
CqRouter::~CqRouter() = default;

void CqRouter::assign(ibv_cq* cq, uint32_t qp_num, int owner) {
  auto& owners = owners_[cq];
  owners[qp_num] = owner;
  bool several = false;
  for (const auto& [qpn, o] : owners) several |= o != owner;
  if (!several) return;
  auto& s = shared_[cq];
  if (!s) {
    s = std::make_unique<Shared>();
    s->cq = cq;
  }
  s->owner_of = owners;
}

CqRouter::Shared* CqRouter::shared(ibv_cq* cq) const {
  auto it = shared_.find(cq);
  return it == shared_.end() ? nullptr : it->second.get();
}

int CqRouter::poll(Shared* s, int owner, int n, ibv_wc* out) {
  std::lock_guard lock(s->mutex);
  int got = 0;
  auto& mine = s->queued[owner];
  while (got < n && !mine.empty()) {
    out[got++] = mine.front();
    mine.pop_front();
  }
  if (got > 0) return got;
  ibv_wc batch[32];
  int k = ibv_poll_cq(s->cq, 32, batch);
  if (k < 0) return k;
  for (int i = 0; i < k; ++i) {
    auto it = s->owner_of.find(batch[i].qp_num);
    if (it == s->owner_of.end()) {
      s->dropped.fetch_add(1, std::memory_order_relaxed);
    } else if (it->second == owner && got < n) {
      out[got++] = batch[i];
    } else {
      s->queued[it->second].push_back(batch[i]);
    }
  }
  return got;
}

uint64_t CqRouter::dropped() const {
  uint64_t d = 0;
  for (const auto& [cq, s] : shared_) d += s->dropped.load(std::memory_order_relaxed);
  return d;
}

}  // namespace qpo::dataplane
