#include "dataplane/cq_router.h"

#include <atomic>

#include "dataplane/post.h"  // kPoolRecvTag

namespace qpo::dataplane {

struct CqRouter::Shared {
  ibv_cq* cq = nullptr;
  std::mutex mutex;
  std::map<uint32_t, int> owner_of;                 // qp_num -> owner
  std::map<uint32_t, int> receives_of;              // qp_num -> owner of its pool's receives
  std::map<int, std::deque<ibv_wc>> queued;         // owner -> completions not yet taken
  std::atomic<uint64_t> dropped{0};
};

namespace {

// Who takes this completion: the owner of the QP's pool receives for one of those, else the
// QP's owner; -1 when nobody drives the QP.
int owner_of(const CqRouter::Shared& s, const ibv_wc& wc);

}  // namespace

CqRouter::CqRouter() = default;
CqRouter::~CqRouter() = default;

void CqRouter::assign(ibv_cq* cq, uint32_t qp_num, int owner) { set(cq, false, qp_num, owner); }

void CqRouter::assign_receives(ibv_cq* cq, uint32_t qp_num, int owner) { set(cq, true, qp_num, owner); }

void CqRouter::set(ibv_cq* cq, bool receives, uint32_t qp_num, int owner) {
  Owners& owners = owners_[cq];
  auto [entry, added] = (receives ? owners.receives : owners.all).try_emplace(qp_num, owner);
  if (!added) {
    if (auto used = owners.uses.find(entry->second); used != owners.uses.end() && --used->second == 0)
      owners.uses.erase(used);
    entry->second = owner;
  }
  ++owners.uses[owner];
  // Once shared, a CQ stays shared and its maps follow every change: a reassignment that
  // leaves one owner (a QP's receives handed to its sender) must still move them.
  if (owners.uses.size() < 2 && !shared_.count(cq)) return;
  auto& s = shared_[cq];
  bool fresh = !s;
  if (fresh) {
    s = std::make_unique<Shared>();
    s->cq = cq;
  }
  std::lock_guard lock(s->mutex);
  if (fresh) {
    s->owner_of = owners.all;
    s->receives_of = owners.receives;
  } else {
    (receives ? s->receives_of : s->owner_of)[qp_num] = owner;
  }
  // Completions already queued follow their QP to its new owner (a receive of an SRQ's second
  // QP, queued while one stream read all of them, goes back to that QP's own reader).
  bool any_queued = false;
  for (const auto& [o, queue] : s->queued) any_queued |= !queue.empty();
  if (!any_queued) return;
  std::map<int, std::deque<ibv_wc>> requeued;
  for (auto& [o, queue] : s->queued)
    for (const auto& wc : queue) {
      int to = owner_of(*s, wc);
      if (to >= 0) requeued[to].push_back(wc);
    }
  s->queued = std::move(requeued);
}

CqRouter::Shared* CqRouter::shared(ibv_cq* cq) const {
  auto it = shared_.find(cq);
  return it == shared_.end() ? nullptr : it->second.get();
}

bool CqRouter::exclusive(ibv_cq* cq, int owner) const {
  auto it = owners_.find(cq);
  if (it == owners_.end()) return true;
  const auto& uses = it->second.uses;
  return uses.size() == 1 && uses.begin()->first == owner;
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
    int to = owner_of(*s, batch[i]);
    if (to < 0) {
      s->dropped.fetch_add(1, std::memory_order_relaxed);
    } else if (to == owner && got < n) {
      out[got++] = batch[i];
    } else {
      s->queued[to].push_back(batch[i]);
    }
  }
  return got;
}

namespace {

int owner_of(const CqRouter::Shared& s, const ibv_wc& wc) {
  if (wc.wr_id & kPoolRecvTag)
    if (auto r = s.receives_of.find(wc.qp_num); r != s.receives_of.end()) return r->second;
  auto it = s.owner_of.find(wc.qp_num);
  return it == s.owner_of.end() ? -1 : it->second;
}

}  // namespace

uint64_t CqRouter::dropped() const {
  uint64_t d = 0;
  for (const auto& [cq, s] : shared_) d += s->dropped.load(std::memory_order_relaxed);
  return d;
}

}  // namespace qpo::dataplane
