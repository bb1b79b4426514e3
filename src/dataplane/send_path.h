#pragma once
// The one place the data path hands send work requests to the device. A QP created with send
// ops (Endpoint::qpx) takes them through the extended post API - ibv_wr_start, a builder and
// a setter per WR, ibv_wr_complete - as perftest does by default; otherwise ibv_post_send.
// On rxe the extended path skips the provider's per-WR validation and conversion of the
// ibv_send_wr, which is most of the user-space cost of a post in the lab's emulated CPU.
// Callers keep building ibv_send_wr chains: one description of a WR for both paths.
#include <infiniband/verbs.h>

#include <cerrno>

#include "dataplane/endpoint.h"

namespace qpo::dataplane {

namespace detail {

// A WR gathering several SGEs is left to ibv_post_send: rxe's list setters get the message
// length wrong in rdma-core 44 (wr_set_sge_list adds the first SGE's length num_sge times,
// wr_set_inline_data_list adds nothing), and the kernel then fails the WR with
// IBV_WC_LOC_QP_OP_ERR. A send with invalidate too: QPs are created without
// IBV_QP_EX_WITH_SEND_WITH_INV among their send ops (one WR a run, no post rate to win).
inline bool needs_legacy(const ibv_send_wr* wr) {
  for (; wr; wr = wr->next)
    if (wr->num_sge > 1 || wr->opcode == IBV_WR_SEND_WITH_INV) return true;
  return false;
}

// One WR through the builders; false for an opcode the data path never builds.
inline bool build(ibv_qp_ex* qx, bool ud, const ibv_send_wr& w) {
  qx->wr_id = w.wr_id;
  qx->wr_flags = w.send_flags;
  switch (w.opcode) {
    case IBV_WR_SEND: ibv_wr_send(qx); break;
    case IBV_WR_SEND_WITH_IMM: ibv_wr_send_imm(qx, w.imm_data); break;
    case IBV_WR_RDMA_WRITE: ibv_wr_rdma_write(qx, w.wr.rdma.rkey, w.wr.rdma.remote_addr); break;
    case IBV_WR_RDMA_WRITE_WITH_IMM:
      ibv_wr_rdma_write_imm(qx, w.wr.rdma.rkey, w.wr.rdma.remote_addr, w.imm_data);
      break;
    case IBV_WR_RDMA_READ: ibv_wr_rdma_read(qx, w.wr.rdma.rkey, w.wr.rdma.remote_addr); break;
    case IBV_WR_ATOMIC_CMP_AND_SWP:
      ibv_wr_atomic_cmp_swp(qx, w.wr.atomic.rkey, w.wr.atomic.remote_addr, w.wr.atomic.compare_add, w.wr.atomic.swap);
      break;
    case IBV_WR_ATOMIC_FETCH_AND_ADD:
      ibv_wr_atomic_fetch_add(qx, w.wr.atomic.rkey, w.wr.atomic.remote_addr, w.wr.atomic.compare_add);
      break;
    default: return false;
  }
  if (ud) ibv_wr_set_ud_addr(qx, w.wr.ud.ah, w.wr.ud.remote_qpn, w.wr.ud.remote_qkey);
  if (w.num_sge == 0) return true;  // more than one: needs_legacy
  if (w.send_flags & IBV_SEND_INLINE)
    ibv_wr_set_inline_data(qx, reinterpret_cast<void*>(w.sg_list[0].addr), w.sg_list[0].length);
  else
    ibv_wr_set_sge(qx, w.sg_list[0].lkey, w.sg_list[0].addr, w.sg_list[0].length);
  return true;
}

}  // namespace detail

// ibv_post_send's contract on either path: 0, or an errno with *bad at the first WR not
// posted. The extended path posts all or none, so *bad is then the head of the chain.
inline int post_send_chain(const Endpoint& ep, ibv_send_wr* wr, ibv_send_wr** bad) {
  ibv_qp_ex* qx = ep.qpx;
  if (!qx || detail::needs_legacy(wr)) return ibv_post_send(ep.qp, wr, bad);
  bool ud = ep.qp->qp_type == IBV_QPT_UD;
  ibv_wr_start(qx);
  for (ibv_send_wr* w = wr; w; w = w->next)
    if (!detail::build(qx, ud, *w)) {
      ibv_wr_abort(qx);
      *bad = wr;
      return EINVAL;
    }
  int e = ibv_wr_complete(qx);
  if (e) *bad = wr;
  return e;
}

// Rings the send queue's doorbell without posting anything: an empty ibv_wr_start /
// ibv_wr_complete. ibv_post_send cannot (an empty list is EINVAL before any doorbell), so this
// needs the extended API. On rxe it makes the kernel run the QP's requester over what is
// already queued; on hardware it is a no-op.
inline int ring_doorbell(ibv_qp_ex* qx) {
  ibv_wr_start(qx);
  return ibv_wr_complete(qx);
}

}  // namespace qpo::dataplane
