#include "wire/roce_packet.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cstring>

#include "wire/bth_opcodes.h"

namespace qpo::wire {

namespace {

constexpr uint16_t kRoceV2Port = 4791;
constexpr uint16_t kEthIpv4 = 0x0800, kEthIpv6 = 0x86DD, kEthVlan = 0x8100, kEthQinQ = 0x88A8;

uint16_t be16(const uint8_t* p) { return static_cast<uint16_t>(p[0] << 8 | p[1]); }
uint32_t be24(const uint8_t* p) { return static_cast<uint32_t>(p[0]) << 16 | p[1] << 8 | p[2]; }
uint32_t be32(const uint8_t* p) { return static_cast<uint32_t>(p[0]) << 24 | be24(p + 1); }
uint64_t be64(const uint8_t* p) { return static_cast<uint64_t>(be32(p)) << 32 | be32(p + 4); }

std::optional<RocePacket> no(std::string* why, const char* text) {
  if (why) *why = text;
  return std::nullopt;
}

}  // namespace

std::optional<RocePacket> decode_frame(const uint8_t* f, size_t len, int link_type, std::string* why) {
  size_t at = 0;
  uint16_t ether = 0;
  if (link_type == kLinkEthernet) {
    if (len < 14) return no(why, "short Ethernet header");
    ether = be16(f + 12);
    at = 14;
    while ((ether == kEthVlan || ether == kEthQinQ) && at + 4 <= len) {
      ether = be16(f + at + 2);
      at += 4;
    }
  } else if (link_type == kLinkLinuxSll) {
    if (len < 16) return no(why, "short Linux cooked header");
    ether = be16(f + 14);
    at = 16;
  } else if (link_type == kLinkRaw) {
    if (len < 1) return no(why, "empty frame");
    ether = (f[0] >> 4) == 6 ? kEthIpv6 : kEthIpv4;
  } else {
    return no(why, "unsupported link type");
  }
  RocePacket p;
  p.frame_size = static_cast<uint32_t>(len);
  size_t ip_end = len;  // the IP datagram's end, from its length field (frames may be padded)
  if (ether == kEthIpv4) {
    if (at + 20 > len) return no(why, "short IPv4 header");
    size_t ihl = static_cast<size_t>(f[at] & 0x0f) * 4;
    if (f[at + 9] != IPPROTO_UDP) return no(why, "not UDP");
    p.ecn = f[at + 1] & 3;
    p.src[10] = p.src[11] = p.dst[10] = p.dst[11] = 0xff;
    std::memcpy(&p.src[12], f + at + 12, 4);
    std::memcpy(&p.dst[12], f + at + 16, 4);
    ip_end = std::min(len, at + be16(f + at + 2));
    at += ihl;
  } else if (ether == kEthIpv6) {
    if (at + 40 > len) return no(why, "short IPv6 header");
    if (f[at + 6] != IPPROTO_UDP) return no(why, "not UDP");
    p.ecn = (be16(f + at) >> 4) & 3;
    std::memcpy(p.src.data(), f + at + 8, 16);
    std::memcpy(p.dst.data(), f + at + 24, 16);
    ip_end = std::min(len, at + 40 + be16(f + at + 4));
    at += 40;
  } else {
    return no(why, "not IP");
  }
  if (at + 8 > ip_end) return no(why, "short UDP header");
  if (be16(f + at + 2) != kRoceV2Port) return no(why, "not UDP port 4791");
  at += 8;
  if (at + 12 + 4 > ip_end) return no(why, "short BTH");
  const uint8_t* bth = f + at;
  p.opcode = bth[0];
  p.solicited = bth[1] & 0x80;
  uint8_t pad = (bth[1] >> 4) & 3;
  p.pkey = be16(bth + 2);
  p.dest_qpn = be24(bth + 5);
  p.ack_req = bth[8] & 0x80;
  p.psn = be24(bth + 9);
  at += 12;
  const OpcodeInfo* info = opcode_info(p.opcode);
  uint8_t ext = info ? info->ext : 0;
  auto need = [&](size_t n) { return at + n + 4 <= ip_end; };
  if (ext & kDeth) {
    if (!need(8)) return no(why, "short DETH");
    p.src_qpn = be24(f + at + 5);
    at += 8;
  }
  if (ext & kReth) {
    if (!need(16)) return no(why, "short RETH");
    p.va = be64(f + at);
    p.rkey = be32(f + at + 8);
    p.dma_length = be32(f + at + 12);
    at += 16;
  }
  if (ext & kAtomicEth) {
    if (!need(28)) return no(why, "short AtomicETH");
    p.va = be64(f + at);
    p.rkey = be32(f + at + 8);
    at += 28;
  }
  if (ext & kAeth) {
    if (!need(4)) return no(why, "short AETH");
    p.syndrome = f[at];
    p.msn = be24(f + at + 1);
    at += 4;
  }
  if (ext & kAtomicAck) at += 8;
  if (ext & (kImm | kIeth)) at += 4;
  if (at + 4 > ip_end) return no(why, "short packet");
  p.icrc = be32(f + ip_end - 4);
  size_t body = ip_end - 4 - at;
  p.payload = static_cast<uint32_t>(body >= pad ? body - pad : 0);
  return p;
}

AckKind ack_kind(uint8_t s) {
  switch (s >> 5) {
    case 0: return AckKind::Ack;
    case 1: return AckKind::RnrNak;
    case 3: return AckKind::Nak;
    default: return AckKind::Reserved;
  }
}

std::string syndrome_text(uint8_t s) {
  static const char* const kNak[] = {"PSN sequence error", "invalid request", "remote access error",
                                     "remote operational error", "invalid RD request"};
  uint8_t v = syndrome_value(s);
  switch (ack_kind(s)) {
    case AckKind::Ack: return "ACK";
    case AckKind::RnrNak: return "RNR NAK (timer " + std::to_string(v) + ")";
    case AckKind::Nak: return std::string("NAK ") + (v < 5 ? kNak[v] : "reserved code " + std::to_string(v));
    default: return "reserved syndrome " + std::to_string(s);
  }
}

std::string address_text(const std::array<uint8_t, 16>& a) {
  static const uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  char buf[INET6_ADDRSTRLEN] = {};
  if (std::memcmp(a.data(), kMapped, 12) == 0) inet_ntop(AF_INET, &a[12], buf, sizeof buf);
  else inet_ntop(AF_INET6, a.data(), buf, sizeof buf);
  return buf;
}

int32_t psn_diff(uint32_t b, uint32_t a) {
  int32_t d = static_cast<int32_t>((b - a) & 0xffffff);
  return d >= (1 << 23) ? d - (1 << 24) : d;
}

}  // namespace qpo::wire
