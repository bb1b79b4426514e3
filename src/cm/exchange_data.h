#pragma once
// `cm: { exchange_only: true }` (perftest's -z): the pair's out-of-band exchange travels in the
// CM's private data instead of through the agents, on ids with no QP attached; the QPs come up
// by their own `states:` with those values. One table of what travels, for the validator (the
// sizes), the planner (the arguments) and exec (the bytes). No librdmacm here: check/ and plan/
// include it.
//
// A side's private data, little-endian, fixed layout (both sides know the scenario):
//   the QP:      qp_num u32, sq_psn u32, lid u16, gid [16], active_mtu u8, port u8,
//                slots_count u32, slot_size u32                                   36 bytes
//   its slots:   qpo's receive buffer "qpo.slots.QP" (smoke RDMA writes aim at it):
//                addr u64, length u64, rkey u32 (all 0 when the QP has none)      20 bytes
//   each MR of carried_mrs(), in that order: addr u64, length u64, rkey u32       20 bytes each
// The REQ (rdma_connect) carries the active side's, the REP (rdma_accept) the passive side's.
// RDMA_PS_TCP over IP leaves 56 bytes of the REQ (92 less the 36-byte rdma_cm header) and 196
// of the REP: the active side's QP and slots fill the REQ, so it carries no MR; the passive
// side carries up to 7.
#include <cstddef>
#include <string>
#include <vector>

#include "scenario/model.h"

namespace qpo::cm {

inline constexpr size_t kExchangeQpBytes = 36;
inline constexpr size_t kExchangeMrBytes = 20;
inline constexpr size_t kReqPrivateData = 56;   // rdma_connect, RDMA_PS_TCP
inline constexpr size_t kRepPrivateData = 196;  // rdma_accept, RDMA_PS_TCP

// The MRs `q`'s side carries: every remote_mr of a workload whose QP is q's cm: peer (the
// MRs the peer's traffic aims at), in workload order, each once.
inline std::vector<std::string> carried_mrs(const scenario::Scenario& s, const scenario::Qp& q) {
  std::vector<std::string> out;
  if (!q.cm.peer) return out;
  for (const auto& w : s.workloads) {
    if (w.qp.name != q.cm.peer.name || !w.remote_mr) continue;
    bool seen = false;
    for (const auto& n : out) seen |= n == w.remote_mr.name;
    if (!seen) out.push_back(w.remote_mr.name);
  }
  return out;
}

// Bytes of q's side: the QP, its slots, its MRs.
inline size_t exchange_bytes(const scenario::Scenario& s, const scenario::Qp& q) {
  return kExchangeQpBytes + kExchangeMrBytes + kExchangeMrBytes * carried_mrs(s, q).size();
}

// What the CM message of q's side holds: 56 (active, the REQ) or 196 (passive, the REP).
inline size_t exchange_limit(const scenario::Qp& q) { return q.cm.active ? kReqPrivateData : kRepPrivateData; }

}  // namespace qpo::cm
