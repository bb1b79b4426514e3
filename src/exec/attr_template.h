#pragma once
// A transition's ibv_qp_attr, built from the scenario once, before the bring-up window opens:
// every literal and device value in place, plus a short list of the fields that wait for
// the peer's published values (dest_qp_num, rq_psn, path_mtu, an address vector's dlid and
// dgid). After the exchange, one QP's attr is a copy and a few stores instead of a walk over
// attribute names; thousands of QPs made from one `count:` share nothing else per modify.
#include <infiniband/verbs.h>

#include <array>
#include <cstdint>

#include "exec/exchange.h"
#include "exec/run_state.h"

namespace qpo::exec {

enum class PeerValue : uint8_t { Qpn, SqPsn, Lid, Gid, PathMtu };

// Where one of the peer's values goes: `size` bytes at `offset` into ibv_qp_attr.
struct PeerPatch {
  PeerValue value = PeerValue::Qpn;
  uint8_t size = 0;
  uint16_t offset = 0;
  const char* field = "";  // the scenario's field name, for "needs a peer" errors
};

struct AttrTemplate {
  ibv_qp_attr attr{};
  std::array<PeerPatch, 8> patches{};
  uint8_t patch_count = 0;

  // This QP's attr with the peer's values in (peer nullptr: none was published). Throws
  // std::runtime_error when a field needs a peer that is missing; path_mtu: auto then
  // keeps this port's active_mtu.
  // Writes into `out` (a copy of `attr` first): no temporary, it runs per QP in the window.
  void resolve(const QpState& q, const RemoteQp* peer, ibv_qp_attr& out) const;
};

// Throws std::runtime_error for a symbolic value with no run-time meaning for its field.
AttrTemplate compile_attrs(const QpState& q, const scenario::Transition& t);

}  // namespace qpo::exec
