#include "cm/peer_check.h"

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

std::string ipv4_if_mapped(const std::string& ip) { return ip.starts_with("::ffff:") && ip.find('.') != std::string::npos ? ip.substr(7) : ip; }

}  // namespace

std::string not_the_peer(const ExpectedPeer& peer, const ConnectRequest& req) {
  if (peer.address && ipv4_if_mapped(req.address) != ipv4_if_mapped(*peer.address))
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
