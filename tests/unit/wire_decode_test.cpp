// RoCEv2 frames decoded field by field (IBTA vol. 1 9.2-9.3, RoCEv2 annex A17), frames built
// here byte by byte; the real oracle is tshark over a lab capture (tests/rxe/wire_capture.sh).
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "wire/bth_opcodes.h"
#include "wire/listing.h"
#include "wire/roce_packet.h"

using namespace qpo::wire;

namespace {

// Ethernet + IPv4 (10.0.1.1 -> 10.0.1.2, ECN bits `ecn`) + UDP to 4791 + `transport` + ICRC.
std::vector<uint8_t> ipv4_frame(const std::vector<uint8_t>& transport, uint8_t ecn = 0) {
  std::vector<uint8_t> f(14, 0);
  f[12] = 0x08;  // IPv4
  size_t ip_len = 20 + 8 + transport.size() + 4;
  std::vector<uint8_t> ip = {0x45, ecn, static_cast<uint8_t>(ip_len >> 8), static_cast<uint8_t>(ip_len), 0, 0, 0x40, 0,
                             64,   17,  0, 0, 10, 0, 1, 1, 10, 0, 1, 2};
  f.insert(f.end(), ip.begin(), ip.end());
  size_t udp_len = 8 + transport.size() + 4;
  std::vector<uint8_t> udp = {0xc0, 0x00, 0x12, 0xb7, static_cast<uint8_t>(udp_len >> 8), static_cast<uint8_t>(udp_len), 0, 0};
  f.insert(f.end(), udp.begin(), udp.end());
  f.insert(f.end(), transport.begin(), transport.end());
  for (uint8_t b : {0xde, 0xad, 0xbe, 0xef}) f.push_back(b);
  f.resize(f.size() + 6, 0);  // Ethernet padding after the IP datagram is not part of it
  return f;
}

// BTH: opcode, pad count, dest QP, ack request, PSN.
std::vector<uint8_t> bth(uint8_t opcode, uint8_t pad, uint32_t qpn, bool ack_req, uint32_t psn) {
  return {opcode, static_cast<uint8_t>(pad << 4), 0xff, 0xff, 0, static_cast<uint8_t>(qpn >> 16), static_cast<uint8_t>(qpn >> 8),
          static_cast<uint8_t>(qpn), static_cast<uint8_t>(ack_req ? 0x80 : 0), static_cast<uint8_t>(psn >> 16),
          static_cast<uint8_t>(psn >> 8), static_cast<uint8_t>(psn)};
}

RocePacket decode(const std::vector<uint8_t>& f) {
  std::string why;
  auto p = decode_frame(f.data(), f.size(), kLinkEthernet, &why);
  INFO(why);
  REQUIRE(p);
  return *p;
}

}  // namespace

TEST_CASE("an RDMA WRITE First carries its RETH: address, rkey, length, and the payload after it") {
  auto t = bth(0x06, 0, 0x000011, false, 0x53c3e7);
  for (uint8_t b : {0, 0, 0x7f, 0xaa, 0, 0, 0x10, 0x00, 0x00, 0x00, 0x12, 0x34, 0, 0, 0x40, 0}) t.push_back(b);
  t.resize(t.size() + 1024, 0x5a);
  auto p = decode(ipv4_frame(t));
  CHECK(p.opcode == 0x06);
  CHECK(opcode_info(p.opcode)->name == "RC RDMA Write First");
  CHECK(p.dest_qpn == 0x11);
  CHECK(p.psn == 0x53c3e7);
  CHECK(p.va == 0x7faa00001000ull);
  CHECK(p.rkey == 0x1234);
  CHECK(p.dma_length == 16384);
  CHECK(p.payload == 1024);
  CHECK(p.icrc == 0xdeadbeef);
  CHECK(address_text(p.src) == "10.0.1.1");
  CHECK(address_text(p.dst) == "10.0.1.2");
}

TEST_CASE("a NAK's AETH says PSN sequence error and its MSN; the pad bytes are not payload") {
  auto t = bth(0x11, 0, 0x000012, false, 0x000104);
  for (uint8_t b : {0x60, 0x00, 0x00, 0x03}) t.push_back(b);
  auto p = decode(ipv4_frame(t));
  REQUIRE(p.syndrome);
  CHECK(ack_kind(*p.syndrome) == AckKind::Nak);
  CHECK(syndrome_text(*p.syndrome) == "NAK PSN sequence error");
  CHECK(p.msn == 3);
  CHECK(p.payload == 0);
  CHECK(syndrome_text(0x2c) == "RNR NAK (timer 12)");
  CHECK(syndrome_text(0x1f) == "ACK");

  auto s = bth(0x04, 3, 0x12, true, 7);
  s.insert(s.end(), {1, 2, 3, 4, 5, 0, 0, 0});  // 5 bytes of SEND payload, padded to 8
  auto q = decode(ipv4_frame(s));
  CHECK(q.payload == 5);
  CHECK(q.ack_req);
}

TEST_CASE("the ECN bits of the IP header are kept (CE is 3)") {
  CHECK(decode(ipv4_frame(bth(0x04, 0, 1, true, 1), 3)).ecn == 3);
  CHECK(decode(ipv4_frame(bth(0x04, 0, 1, true, 1), 2)).ecn == 2);
}

TEST_CASE("frames that are not RoCEv2 are refused with the reason") {
  auto f = ipv4_frame(bth(0x04, 0, 1, false, 1));
  f[14 + 20 + 3] = 0x50;  // another UDP port
  std::string why;
  CHECK_FALSE(decode_frame(f.data(), f.size(), kLinkEthernet, &why));
  CHECK(why == "not UDP port 4791");
  CHECK_FALSE(decode_frame(f.data(), 20, kLinkEthernet, &why));
  CHECK(why == "short IPv4 header");
}

TEST_CASE("PSN distance wraps at 2^24") {
  CHECK(psn_diff(0x000002, 0xfffffe) == 4);
  CHECK(psn_diff(0xfffffe, 0x000002) == -4);
  CHECK(psn_diff(5, 5) == 0);
}

TEST_CASE("a request PSN its flow carried before is a retransmission, counted per PSN; a new one late is not") {
  std::vector<RocePacket> ps;
  auto req = [&](uint32_t psn, double t) {
    RocePacket p;
    p.opcode = 0x07;
    p.dest_qpn = 0x11;
    p.psn = psn;
    p.time = t;
    ps.push_back(p);
  };
  req(0xfffffe, 0), req(0xffffff, 1e-6), req(0x000001, 2e-6);  // 0x000000 held back; the next PSN wraps
  req(0x000000, 3e-6);                                         // it comes late: new, not resent
  req(0x000001, 4e-6), req(0x000000, 5e-6), req(0x000000, 6e-6);  // resent: once, then twice
  RocePacket ack;
  ack.opcode = 0x11;
  ack.dest_qpn = 0x12;
  ack.psn = 0x000001;
  ack.syndrome = 0;
  ps.push_back(ack);
  ps.push_back(ack);  // an ACK repeating its PSN is no retransmission
  auto flows = group_flows(ps, {{"qb", {}, 0x11}});
  REQUIRE(flows.size() == 2);
  CHECK(flows[0].name == ":: -> qb (QP 0x11 at ::)");
  CHECK(flows[0].retransmissions == 3);
  CHECK_FALSE(flows[0].packets[2].retransmission);
  CHECK_FALSE(flows[0].packets[3].retransmission);
  CHECK(flows[0].packets[4].transmission == 2);
  CHECK(flows[0].packets[5].transmission == 2);
  CHECK(flows[0].packets[6].transmission == 3);
  CHECK(flows[0].packets[3].t_us == doctest::Approx(3.0));
  CHECK(flows[1].retransmissions == 0);
}
