#include "interop/pingpong_message.h"

#include <arpa/inet.h>

#include <cstdio>

#include "interop/hex_field.h"

namespace qpo::interop {

std::string format_pingpong_message(const PingpongAddress& a) {
  char head[32];
  std::snprintf(head, sizeof head, "%04x:%06x:%06x:", a.lid, a.qpn & 0xFFFFFF, a.psn & 0xFFFFFF);
  std::string out = head;
  static const char* digits = "0123456789abcdef";
  for (uint8_t b : a.gid) {
    out += digits[b >> 4];
    out += digits[b & 0xF];
  }
  out += '\0';
  return out;
}

std::optional<PingpongAddress> parse_pingpong_message(std::string_view bytes, std::string* why) {
  auto fail = [&](const std::string& m) -> std::optional<PingpongAddress> {
    *why = m;
    return std::nullopt;
  };
  if (bytes.size() != kPingpongMessageBytes)
    return fail(std::to_string(bytes.size()) + " bytes, not the " + std::to_string(kPingpongMessageBytes) +
                " of an ibv_pingpong address message");
  std::string_view text = bytes.substr(0, bytes.find('\0'));
  std::string_view parts[4];
  for (int i = 0; i < 3; ++i) {
    size_t colon = text.find(':');
    if (colon == std::string_view::npos) return fail("'" + std::string(text) + "' has fewer than 4 ':'-separated fields");
    parts[i] = text.substr(0, colon);
    text.remove_prefix(colon + 1);
  }
  parts[3] = text;
  PingpongAddress a;
  auto lid = hex_field(parts[0], 4), qpn = hex_field(parts[1], 6), psn = hex_field(parts[2], 6);
  if (!lid) return fail("LID '" + std::string(parts[0]) + "' is not up to 4 hex digits");
  if (!qpn) return fail("QPN '" + std::string(parts[1]) + "' is not up to 6 hex digits");
  if (!psn) return fail("PSN '" + std::string(parts[2]) + "' is not up to 6 hex digits");
  if (parts[3].size() != 32) return fail("GID '" + std::string(parts[3]) + "' is not 32 hex digits");
  for (size_t i = 0; i < 16; ++i) {
    int hi = hex_digit(parts[3][2 * i]), lo = hex_digit(parts[3][2 * i + 1]);
    if (hi < 0 || lo < 0) return fail("GID '" + std::string(parts[3]) + "' is not 32 hex digits");
    a.gid[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  a.lid = static_cast<uint16_t>(*lid);
  a.qpn = static_cast<uint32_t>(*qpn);
  a.psn = static_cast<uint32_t>(*psn);
  return a;
}

std::string describe(const PingpongAddress& a) {
  char head[64];
  std::snprintf(head, sizeof head, "LID 0x%04x, QPN 0x%06x, PSN 0x%06x, GID ", a.lid, a.qpn, a.psn);
  char gid[INET6_ADDRSTRLEN] = "?";
  inet_ntop(AF_INET6, a.gid.data(), gid, sizeof gid);
  return std::string(head) + gid;
}

}  // namespace qpo::interop
