#pragma once
// A memory window (ibv_alloc_mw / ibv_dealloc_mw) and the work requests that bind and
// invalidate it. The owner is deallocated before its MR and PD (teardown's reverse order;
// rxe refuses ibv_dereg_mr while a window is bound to the MR). Binding and invalidating post
// on a QP's send queue; the caller polls the completion (the run's CQ router owns the CQ).
#include <infiniband/verbs.h>

#include <cstdint>
#include <string>

#include "verbs/resources.h"

namespace qpo::verbs {

class Mw : public Resource {
 public:
  // type: 1 or 2 (IBV_MW_TYPE_1 / IBV_MW_TYPE_2). Throws VerbsError("ibv_alloc_mw").
  Mw(std::string name, ibv_pd* pd, int type);
  ~Mw() override { release(); }
  const char* destroy_verb() const override { return "ibv_dealloc_mw"; }
  int release() override;
  ibv_mw* get() const { return mw_; }
  int type() const { return type_; }

 private:
  ibv_mw* mw_ = nullptr;
  int type_;
};

// Where a bind opens the window: `length` bytes of `mr` from `addr` (an address inside the
// MR's buffer), with remote `access` (IBV_ACCESS_REMOTE_*, IBV_ACCESS_ZERO_BASED).
struct WindowBind {
  ibv_mr* mr = nullptr;
  uint64_t addr = 0, length = 0;
  unsigned access = 0;
};

// Type 1: ibv_bind_mw, signaled, wr_id `wr_id`. On success `*rkey` is the window's new rkey
// (the provider's choice). Returns 0 or the errno; EINVAL without an MR (b.mr == nullptr).
int bind_type1(ibv_qp* qp, Mw& mw, const WindowBind& b, uint64_t wr_id, uint32_t* rkey);
// Type 1 unbind: ibv_bind_mw with length 0 (ibv_bind_mw(3)), given the MR the window was bound
// to. ibv_bind_mw(3) allows a NULL MR there, but librxe reads the MR's lkey whatever the length
// (rdma-core providers/rxe/rxe.c convert_send_wr) and dies of SIGSEGV on NULL; the kernel
// ignores the MR of a zero-length bind (rxe_mw.c rxe_bind_mw), so the window's own MR is safe
// with every provider. `*rkey`: the window's new rkey (the old one no longer reaches anything).
int unbind_type1(ibv_qp* qp, Mw& mw, ibv_mr* mr, uint64_t wr_id, uint32_t* rkey);
// Type 2: an IBV_WR_BIND_MW work request (ibv_post_send) giving the window `new_rkey`
// (ibv_inc_rkey of the current one: only its low 8 bits are the consumer's). 0 or the errno.
// Once posted, the window's ibv_mw rkey is `new_rkey`: the next bind names the window by it
// (librxe sends ibv_mw.rkey as the window's current key and the kernel refuses a bind whose
// key is not the current one: IBV_WC_MW_BIND_ERR), as librxe's own type 1 ibv_bind_mw does.
// A bind that completes in error leaves the QP in ERR, where nothing binds again.
int post_bind_type2(ibv_qp* qp, Mw& mw, const WindowBind& b, uint32_t new_rkey, uint64_t wr_id);
// IBV_WR_LOCAL_INV of `rkey` (a type 2 window's), signaled. 0 or the errno.
int post_local_invalidate(ibv_qp* qp, uint32_t rkey, uint64_t wr_id);
// The next rkey of a window: the same index, the key byte + 1 (ibv_inc_rkey).
uint32_t next_rkey(uint32_t rkey);

}  // namespace qpo::verbs
