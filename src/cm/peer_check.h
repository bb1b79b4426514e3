#pragma once
// Whether a connect request that reached a listener comes from the QP the scenario names as
// its peer (issue 30 item 16: a stock ucmatose client was adopted as the peer, and the run
// failed a minute later blaming the peer's host). An rdma_cm listener takes any request to its
// port; the listener must answer a stranger with rdma_reject and keep waiting for its peer.
//
// What identifies the peer (the source address alone does not: a stranger on the peer's own
// host shares it):
//   - its QP number: qpo's connect carries the peer QP's number (rdma_conn_param.qp_num), and
//     the hosts' exchange published that number before the CM stage. An RC or UC request only:
//     a UD request (SIDR) carries no QP number.
//   - its private data, when the scenario gives the peer's `cm: private_data`: the text up to
//     the first NUL (the CM pads the field with zeros) must be that text.
//   - exchange_only: the private data is the peer's exchange (cm/exchange_data.h), at least its
//     size, starting with the QP number the request carries.
//   - an external tool (exchange rdma_cm): nothing of qpo's; its address when the scenario
//     gives `from:` (an IPv4-mapped IPv6 address counts as the IPv4 one).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace qpo::cm {

struct ExpectedPeer {
  std::string name;                         // the peer QP's scenario name
  std::optional<uint32_t> qpn;              // its QP number as the exchange published it
  std::optional<std::string> private_data;  // the text its `cm: private_data` sends
  size_t exchange_bytes = 0;                // exchange_only: its side's exchange, else 0
  std::optional<std::string> address;       // an external tool's `from`: the only address it may connect from
};

struct ConnectRequest {
  uint32_t qpn = 0;  // rdma_conn_param.qp_num of the request (0 for UD)
  bool ud = false;
  std::vector<unsigned char> private_data;
  std::string address;  // where it came from (peer_address)
};

// A private data field's text: the bytes before the CM's zero padding (raw, not for a terminal).
std::string private_text(const std::vector<unsigned char>& data);

// Empty when `req` can be `peer`'s; otherwise why not, e.g. "QP number 19, not qa's 18".
// Untrusted bytes of the request appear terminal-safe (util::printable).
std::string not_the_peer(const ExpectedPeer& peer, const ConnectRequest& req);

// rdma_reject's private data: the IB CM REJ message's 148 bytes.
inline constexpr size_t kRejectPrivateData = 148;

// The private data of the reject a stranger gets: "qpo: not qa, the peer qb waits for", cut to
// fit the REJ with its terminating NUL.
std::string stranger_reject_text(const std::string& peer, const std::string& listener);

}  // namespace qpo::cm
