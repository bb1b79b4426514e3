#pragma once
// Scenarios often give both QPs of a pair one CQ, and a workload drives each QP from its own
// worker thread. ibv_poll_cq hands a completion to whoever polls first, so a shared CQ is
// polled under a lock and completions are queued for the worker whose QP they belong to.
// CQs that never had two owners are polled directly: the router costs nothing on them (once
// shared, a CQ stays shared, its owners following every reassignment). (The
// executor gives a QP's sends and its pool's receives separate owners, so its CQs that take
// both are shared.)
#include <infiniband/verbs.h>

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

namespace qpo::dataplane {

class CqRouter {
 public:
  struct Shared;
  CqRouter();
  ~CqRouter();  // out of line: Shared is complete only in the .cpp
  CqRouter(const CqRouter&) = delete;
  CqRouter& operator=(const CqRouter&) = delete;

  // Before any worker polls: `owner` (a worker index) drives QP `qp_num`, which completes on `cq`.
  void assign(ibv_cq* cq, uint32_t qp_num, int owner);
  // The receives of QP `qp_num` that a RecvPool posted (wr_id tagged kPoolRecvTag, valid in
  // error completions too) go to `owner` instead: one thread sends on a QP while another
  // receives on it, through one CQ.
  void assign_receives(ibv_cq* cq, uint32_t qp_num, int owner);
  // Null for a CQ with one owner (poll it directly), the shared state otherwise.
  Shared* shared(ibv_cq* cq) const;
  // Every QP completing on `cq` is `owner`'s now (a CQ once shared may be again read by one
  // owner alone: its completion events then wake only that owner). Not while assigning.
  bool exclusive(ibv_cq* cq, int owner) const;
  // Up to n completions of `owner`'s QPs from a shared CQ. Completions of QPs nobody
  // drives are counted in dropped() and discarded.
  int poll(Shared* s, int owner, int n, ibv_wc* out);
  uint64_t dropped() const;

 private:
  std::map<ibv_cq*, std::unique_ptr<Shared>> shared_;
  struct Owners {
    std::map<uint32_t, int> all, receives;  // qp_num -> owner
    std::map<int, size_t> uses;             // owner -> entries of all and receives naming it
  };
  // One entry changes; the CQ is shared from its second owner on. Each change costs a lookup,
  // not a copy of the maps: 10,000 QPs on one CQ are assigned one by one.
  void set(ibv_cq* cq, bool receives, uint32_t qp_num, int owner);
  std::map<ibv_cq*, Owners> owners_;
};

// How one worker reads CQs: the router and its own index, or nothing (poll directly).
struct CqAccess {
  CqRouter* router = nullptr;
  int owner = 0;
};

// One CQ as a worker sees it.
struct CqHandle {
  ibv_cq* cq = nullptr;
  CqRouter* router = nullptr;
  CqRouter::Shared* shared = nullptr;
  int owner = 0;

  CqHandle() = default;
  CqHandle(ibv_cq* c, const CqAccess& a)
      : cq(c), router(a.router), shared(a.router ? a.router->shared(c) : nullptr), owner(a.owner) {}
  int poll(int n, ibv_wc* out) const { return shared ? router->poll(shared, owner, n, out) : ibv_poll_cq(cq, n, out); }
};

}  // namespace qpo::dataplane
