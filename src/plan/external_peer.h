#pragma once
// An `externals:` entry, lowered: the stock tool at the other end of one QP, and how qpo meets
// it (exec/external_exchange.h speaks the exchange).
#include <cstdint>
#include <string>

#include "scenario/model.h"

namespace qpo::plan {

struct ExternalPeer {
  std::string name;       // the entry's name: the directory key its values go under
  std::string qp, host;   // the scenario's QP that connects to it, and that QP's host
  bool ud = false;        // the QP is UD: the tool is ibv_ud_pingpong (qkey 0x11111111, AH per peer)
  scenario::External::Exchange exchange = scenario::External::Exchange::IbvPingpong;
  std::string server;     // qpo connects to the tool there; "" = qpo listens for it
  uint16_t port = 18515;
  uint32_t mtu = 1024;    // the tool's path MTU, in bytes: what `path_mtu: peer` resolves to
  bool qpo_listens() const { return server.empty(); }
  // ibv_rc_pingpong's client sends the first message of the ping-pong: qpo is the initiator
  // when it dials the tool's server.
  bool qpo_initiates() const { return !qpo_listens(); }
  const char* tool() const { return ud ? "ibv_ud_pingpong" : "ibv_rc_pingpong"; }
};

}  // namespace qpo::plan
