#pragma once
// One RoCEv2 packet as captured: the frame's Ethernet, IPv4/IPv6 and UDP (port 4791) headers,
// the Base Transport Header and the extended headers its opcode carries (bth_opcodes.h).
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace qpo::wire {

struct RocePacket {
  double time = 0;              // seconds since the epoch (the capture's timestamp)
  std::array<uint8_t, 16> src{}, dst{};  // IPv6, or IPv4 mapped (::ffff:a.b.c.d), as GIDs are
  uint8_t ecn = 0;              // the IP header's ECN bits (3: CE)
  uint8_t opcode = 0;
  bool solicited = false, ack_req = false;
  uint16_t pkey = 0;
  uint32_t dest_qpn = 0;        // 24 bits
  uint32_t psn = 0;             // 24 bits
  std::optional<uint8_t> syndrome;  // AETH
  uint32_t msn = 0;             // AETH, 24 bits
  uint32_t src_qpn = 0;         // DETH (UD)
  uint32_t rkey = 0;            // RETH
  uint64_t va = 0;              // RETH
  uint32_t dma_length = 0;      // RETH
  uint32_t payload = 0;         // bytes after the headers, before pad and ICRC
  uint32_t frame_size = 0;      // the whole frame as captured
  uint32_t icrc = 0;            // as sent (not checked here)
};

// Link-layer types qpo reads (pcap's DLT numbers): Ethernet, Linux cooked v1, raw IP.
constexpr int kLinkEthernet = 1, kLinkLinuxSll = 113, kLinkRaw = 101;

// The RoCEv2 packet in `frame`, or nothing (another protocol, a truncated frame) with `why`.
std::optional<RocePacket> decode_frame(const uint8_t* frame, size_t len, int link_type, std::string* why = nullptr);

// "ACK", "NAK PSN sequence error", "RNR NAK (timer 12)", ...: the AETH syndrome in words.
std::string syndrome_text(uint8_t syndrome);
enum class AckKind : uint8_t { Ack, RnrNak, Nak, Reserved };
AckKind ack_kind(uint8_t syndrome);
// The NAK code (0: PSN sequence error, 1: invalid request, 2: remote access error, 3: remote
// operational error, 4: invalid RD request) or the RNR timer, the syndrome's low 5 bits.
inline uint8_t syndrome_value(uint8_t syndrome) { return syndrome & 0x1f; }

// a.b.c.d for an IPv4-mapped address, else IPv6 text.
std::string address_text(const std::array<uint8_t, 16>& a);

// PSN arithmetic modulo 2^24: how far `b` is after `a` (negative: before), within +-2^23.
int32_t psn_diff(uint32_t b, uint32_t a);

}  // namespace qpo::wire
