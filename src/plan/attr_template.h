#pragma once
// A Modify step's ibv_qp_attr, lowered from the scenario by the planner: every literal in
// place, plus the short list of fields the run fills in - the peer's published values
// (dest_qp_num, rq_psn, an address vector's dlid and dgid, the smaller of both MTUs) and this
// QP's own (its port, GID index, port MTU, the sq_psn drawn at bring-up). The executor copies
// the template and stores those few values per QP: it never walks the transition's
// attributes. Steps alike (the members of a counted group) share one template.
#include <infiniband/verbs.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

#include "scenario/model.h"
#include "verbs/qp_attr_fields.h"

namespace qpo::plan {

// Where a value known only at run time comes from.
enum class RunValue : uint8_t {
  PeerQpn, PeerSqPsn, PeerLid, PeerGid,  // the exchange: what the peer published
  PeerPathMtu,                           // the smaller of this port's MTU and the peer's
  Port, GidIndex, PortMtu, OwnSqPsn,     // this QP's device and its bring-up PSN
};

// One run-time value: `size` bytes at `offset` into ibv_qp_attr.
struct Patch {
  RunValue value = RunValue::PeerQpn;
  uint8_t size = 0;
  uint16_t offset = 0;
  const char* field = "";  // the scenario's field, for "needs a peer" errors
};

// What the run knows about the QP itself when it modifies it.
struct OwnValues {
  uint8_t port = 1;
  uint8_t gid_index = 0;
  ibv_mtu active_mtu = IBV_MTU_1024;
  uint32_t sq_psn = 0;
};

struct AttrTemplate {
  ibv_qp_attr attr{};
  std::array<Patch, 16> patches{};
  uint8_t patch_count = 0;
  // A value with no run-time meaning for its field: the step fails with this, unrun.
  std::string error;

  // The attr for one QP: a copy, then the run-time values. `Peer` has qpn, sq_psn, lid, gid
  // (16 bytes) and active_mtu (exec's RemoteQp); nullptr when none was published, which is
  // an error (std::runtime_error naming the field and `qp`) for a field that needs one.
  template <typename Peer>
  void resolve(const OwnValues& own, const Peer* peer, const std::string& qp, ibv_qp_attr& out) const;
};

// Throws nothing: a field that cannot be lowered sets `error`.
AttrTemplate lower_attrs(const scenario::Transition& t);

template <typename Peer>
void AttrTemplate::resolve(const OwnValues& own, const Peer* peer, const std::string& qp, ibv_qp_attr& out) const {
  out = attr;
  for (uint8_t i = 0; i < patch_count; ++i) {
    const Patch& p = patches[i];
    switch (p.value) {
      case RunValue::Port: verbs::store_at(out, p.offset, p.size, own.port); continue;
      case RunValue::GidIndex: verbs::store_at(out, p.offset, p.size, own.gid_index); continue;
      case RunValue::PortMtu: verbs::store_at(out, p.offset, p.size, static_cast<uint32_t>(own.active_mtu)); continue;
      case RunValue::OwnSqPsn: verbs::store_at(out, p.offset, p.size, own.sq_psn); continue;
      case RunValue::PeerPathMtu:  // no peer: this port's MTU stays
        if (peer) out.path_mtu = std::min(out.path_mtu, static_cast<ibv_mtu>(peer->active_mtu));
        continue;
      default: break;
    }
    if (!peer) throw std::runtime_error(std::string(p.field) + " is 'peer' but QP '" + qp + "' has no published peer");
    switch (p.value) {
      case RunValue::PeerQpn: verbs::store_at(out, p.offset, p.size, peer->qpn); break;
      case RunValue::PeerSqPsn: verbs::store_at(out, p.offset, p.size, peer->sq_psn); break;
      case RunValue::PeerLid: verbs::store_at(out, p.offset, p.size, peer->lid); break;
      case RunValue::PeerGid: std::memcpy(reinterpret_cast<unsigned char*>(&out) + p.offset, peer->gid.data(), 16); break;
      default: break;
    }
  }
}

}  // namespace qpo::plan
