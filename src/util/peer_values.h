#pragma once
// The values of a QP outside the scenario (`externals:` with `exchange: values`): what a
// scenario gives under `values:` (the loader reads them) or what a values file holds (exec
// reads it when the exchange step runs). One type for both.
#include <cstdint>
#include <string>

#include "util/source_text.h"

namespace qpo::util {

struct PeerValues {
  uint32_t qpn = 0, psn = 0;
  uint16_t lid = 0;
  std::string gid;           // an IPv6 or IPv4 address (a RoCEv2 GID; IPv4 is mapped), "" = none (IB: lid)
  uint32_t qkey = 0x11111111;
  uint32_t mtu = 1024;       // the peer's path MTU, bytes: what `path_mtu: auto` takes as the peer's
  bool has_mr = false;       // the buffer qpo's RDMA WRITEs and READs aim at
  uint64_t mr_addr = 0, mr_length = 0;
  uint32_t mr_rkey = 0;
  SourceLoc loc, qpn_loc, gid_loc, mr_loc;  // in the scenario (a values file's are unset)
};

}  // namespace qpo::util
