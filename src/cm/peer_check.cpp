#include "cm/peer_check.h"

#include <arpa/inet.h>

#include "util/strings.h"

namespace qpo::cm {

namespace {

uint32_t le32(const std::vector<unsigned char>& d) {
  uint32_t v = 0;
  for (size_t i = 0; i < 4; ++i) v |= static_cast<uint32_t>(d[i]) << (8 * i);
  return v;
}

}  // namespace

std::string private_text(const std::vector<unsigned char>& d) {
  std::string s;
  for (unsigned char c : d) {
    if (c == 0) break;
    s += static_cast<char>(c);
  }
  return s;
}

namespace {

// The address in a canonical form: an IPv4 one (also IPv4-mapped IPv6) as 16 mapped bytes, an
// IPv6 one as its bytes; anything else as its text (it then matches only itself).
std::string canonical_address(const std::string& ip) {
  unsigned char b[16] = {};
  if (inet_pton(AF_INET, ip.c_str(), b + 12) == 1) {
    b[10] = b[11] = 0xff;
    return std::string(reinterpret_cast<char*>(b), 16);
  }
  if (inet_pton(AF_INET6, ip.c_str(), b) == 1) return std::string(reinterpret_cast<char*>(b), 16);
  return ip;
}

}  // namespace

std::string not_the_peer(const ExpectedPeer& peer, const ConnectRequest& req) {
  if (peer.address && canonical_address(req.address) != canonical_address(*peer.address))
    return "address " + util::printable(req.address, 64) + ", not " + peer.name + "'s " + *peer.address;
  if (!req.ud && peer.qpn && req.qpn != *peer.qpn)
    return "QP number " + std::to_string(req.qpn) + ", not " + peer.name + "'s " + std::to_string(*peer.qpn);
  if (peer.exchange_bytes) {
    if (req.private_data.size() < peer.exchange_bytes)
      return std::to_string(req.private_data.size()) + " bytes of private data, not " + peer.name + "'s exchange (" +
             std::to_string(peer.exchange_bytes) + " bytes)";
    if (!req.ud && le32(req.private_data) != req.qpn)
      return "private data naming QP " + std::to_string(le32(req.private_data)) + " from QP " + std::to_string(req.qpn) +
             ", not " + peer.name + "'s exchange";
    return "";
  }
  if (peer.private_data && private_text(req.private_data) != *peer.private_data)
    return "private data '" + util::printable(private_text(req.private_data), 64) + "', not " + peer.name + "'s '" +
           util::printable(*peer.private_data, 64) + "'";
  return "";
}

std::string stranger_reject_text(const std::string& peer, const std::string& listener) {
  return ("qpo: not " + peer + ", the peer " + listener + " waits for").substr(0, kRejectPrivateData - 1);
}

}  // namespace qpo::cm
