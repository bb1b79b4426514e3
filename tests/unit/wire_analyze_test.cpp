// A requester's facts from its packets (wire/analyze.h), sequences built here as rxe sends
// them: the lab's captures (tests/rxe/wire_events.sh) show the real ones.
#include <doctest/doctest.h>

#include <vector>

#include "wire/analyze.h"

using namespace qpo::wire;

namespace {

const QpAddress kSelf{{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 1, 1}, 0x11};
const QpAddress kPeer{{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 1, 2}, 0x12};

struct Trace {
  std::vector<RocePacket> packets;
  double t = 0;
  Trace& request(uint32_t psn, uint8_t opcode = 0x07, double after_us = 10) {
    RocePacket p;
    t += after_us * 1e-6;
    p.time = t;
    p.src = kSelf.gid;
    p.dst = kPeer.gid;
    p.dest_qpn = kPeer.qpn;
    p.opcode = opcode;
    p.psn = psn;
    packets.push_back(p);
    return *this;
  }
  Trace& response(uint32_t psn, uint8_t syndrome, double after_us = 10) {
    RocePacket p;
    t += after_us * 1e-6;
    p.time = t;
    p.src = kPeer.gid;
    p.dst = kSelf.gid;
    p.dest_qpn = kSelf.qpn;
    p.opcode = 0x11;
    p.psn = psn;
    p.syndrome = syndrome;
    packets.push_back(p);
    return *this;
  }
};

}  // namespace

TEST_CASE("a NAK for the lost PSN and the resend from it: one NAK, go-back-N kept, the resent packets counted") {
  Trace tr;
  tr.request(100, 0x06);
  for (uint32_t psn = 101; psn <= 107; ++psn) tr.request(psn, psn == 107 ? 0x08 : 0x07);  // 104 lost on the way
  tr.response(104, 0x60);                                                                 // NAK PSN sequence error
  for (uint32_t psn = 104; psn <= 107; ++psn) tr.request(psn, psn == 107 ? 0x08 : 0x07);
  tr.response(107, 0x1f);
  auto f = analyze_requester(tr.packets, kSelf, kPeer);
  CHECK(f.requests == 12);
  CHECK(f.retransmissions == 4);
  CHECK(f.max_transmissions == 2);
  CHECK(f.naks == 1);
  CHECK(f.acks == 1);
  CHECK(f.packets_per_message == 8);
  CHECK(f.go_back_n_violation.empty());
  CHECK(f.timeout_gaps_us.empty());
  REQUIRE(f.nak_delays_us.size() == 1);
  CHECK(f.nak_delays_us[0] == doctest::Approx(40).epsilon(0.01));  // 104 went out 40 us before the NAK came
}

TEST_CASE("RDMA READs in flight: counted from each request to its last response") {
  Trace tr;
  tr.request(1, 0x0C).request(2, 0x0C).request(3, 0x0C);  // three read requests out
  RocePacket last;
  last.src = kPeer.gid;
  last.dst = kSelf.gid;
  last.dest_qpn = kSelf.qpn;
  last.opcode = 0x10;  // Read Response Only
  last.syndrome = 0;
  last.psn = 1;
  tr.packets.push_back(last);
  tr.request(4, 0x0C);
  auto f = analyze_requester(tr.packets, kSelf, kPeer);
  CHECK(f.max_reads_in_flight == 3);
}

TEST_CASE("a resend that does not start at the NAK's PSN breaks go-back-N, and says where") {
  Trace tr;
  for (uint32_t psn = 0; psn <= 5; ++psn) tr.request(psn);
  tr.response(2, 0x60);
  tr.request(3);
  auto f = analyze_requester(tr.packets, kSelf, kPeer);
  CHECK(f.go_back_n_violation == "after a NAK for PSN 0x000002 the sender resumed at 0x000003");
}

TEST_CASE("a skipped PSN breaks go-back-N") {
  Trace tr;
  tr.request(7).request(8).request(10);
  CHECK(analyze_requester(tr.packets, kSelf, kPeer).go_back_n_violation == "PSN 0x00000a sent after 0x000008: 1 PSN(s) skipped");
}

TEST_CASE("a resend no NAK asked for is timed from the last request before it") {
  Trace tr;
  tr.request(5, 0x0A);
  tr.request(5, 0x0A, 16800).request(5, 0x0A, 20000);
  auto f = analyze_requester(tr.packets, kSelf, kPeer);
  REQUIRE(f.timeout_gaps_us.size() == 2);
  CHECK(f.timeout_gaps_us[0] == doctest::Approx(16800).epsilon(0.001));
  CHECK(f.timeout_gaps_us[1] == doctest::Approx(20000).epsilon(0.001));
  CHECK(f.max_transmissions == 3);
}

TEST_CASE("RNR NAKs: their timer field and the gap to the next request") {
  Trace tr;
  tr.request(9, 0x04);
  tr.response(9, 0x32);  // RNR NAK, timer 18
  tr.request(9, 0x04, 6000);
  auto f = analyze_requester(tr.packets, kSelf, kPeer);
  CHECK(f.rnr_naks == 1);
  REQUIRE(f.rnr_timers.size() == 1);
  CHECK(f.rnr_timers[0] == 18);
  CHECK(rnr_timer_us(18) == 5120);
  REQUIRE(f.rnr_gaps_us.size() == 1);
  CHECK(f.rnr_gaps_us[0] == doctest::Approx(6000).epsilon(0.001));
  CHECK(f.timeout_gaps_us.empty());  // an RNR resend is not a timeout
}

TEST_CASE("the local ACK timeout is 4.096 us x 2^timeout") {
  CHECK(ack_timeout_us(12) == doctest::Approx(16777.216));
  CHECK(ack_timeout_us(0) == 0);
}

TEST_CASE("a READ of several response packets takes that many PSNs: the next request after it skips nothing") {
  Trace tr;
  tr.request(0, 0x0C);  // 4 response packets: PSNs 0..3
  RocePacket resp;
  resp.src = kPeer.gid;
  resp.dst = kSelf.gid;
  resp.dest_qpn = kSelf.qpn;
  for (uint8_t op : {0x0D, 0x0E, 0x0E, 0x0F}) {
    resp.opcode = op;
    tr.packets.push_back(resp);
    ++resp.psn;
  }
  tr.request(4, 0x0A);
  CHECK(analyze_requester(tr.packets, kSelf, kPeer).go_back_n_violation.empty());
}

TEST_CASE("a new packet queued before a NAK came does not answer it: the resend after it still must start at the NAK's PSN") {
  Trace tr;
  for (uint32_t psn = 0; psn <= 5; ++psn) tr.request(psn);
  tr.response(2, 0x60);
  tr.request(6);  // already on its way
  tr.request(3);  // the resend: not the NAK's PSN
  auto f = analyze_requester(tr.packets, kSelf, kPeer);
  CHECK(f.go_back_n_violation == "after a NAK for PSN 0x000002 the sender resumed at 0x000003");
  CHECK(f.timeout_gaps_us.empty());
}

TEST_CASE("an ACK of a duplicate (an older PSN) does not move the acknowledged PSN back") {
  Trace tr;
  for (uint32_t psn = 0; psn <= 3; ++psn) tr.request(psn);
  tr.response(3, 0x1f);   // all acknowledged
  tr.response(1, 0x1f);   // a duplicate's ACK
  tr.request(4).request(5);
  tr.request(4, 0x07, 20000);  // a timeout resend from the oldest unacknowledged: 4
  CHECK(analyze_requester(tr.packets, kSelf, kPeer).go_back_n_violation.empty());
}

TEST_CASE("packets per message counts each PSN of the message once, resends mid-message included") {
  Trace tr;
  tr.request(0, 0x06);
  for (uint32_t psn = 1; psn <= 8; ++psn) tr.request(psn);
  tr.response(4, 0x60);
  for (uint32_t psn = 4; psn <= 14; ++psn) tr.request(psn);
  tr.request(15, 0x08);
  CHECK(analyze_requester(tr.packets, kSelf, kPeer).packets_per_message == 16);
}

TEST_CASE("a packet held back on the way (reordered) is no skip once it comes; one that never comes is") {
  Trace tr;
  tr.request(3).request(5).request(6).request(4);  // 4 late, as a delay on the sender's egress makes it
  CHECK(analyze_requester(tr.packets, kSelf, kPeer).go_back_n_violation.empty());
  Trace gap;
  gap.request(3).request(5).request(6);
  CHECK(analyze_requester(gap.packets, kSelf, kPeer).go_back_n_violation == "PSN 0x000005 sent after 0x000003: 1 PSN(s) skipped");
}
