#pragma once
// What a capture says about one requester QP: its requests to its peer and the responses
// that came back, from the requester's host's pcap. These are the facts `wire: expect:`
// asserts (exec/wire_capture.cpp) and the report prints.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "wire/roce_packet.h"

namespace qpo::wire {

struct QpAddress {
  std::array<uint8_t, 16> gid{};
  uint32_t qpn = 0;
};

struct QpWireFacts {
  uint64_t requests = 0;          // request packets sent, retransmissions included
  uint64_t retransmissions = 0;   // request packets whose PSN went out before
  uint64_t max_transmissions = 0; // the most times one PSN went out (1: none resent)
  uint64_t acks = 0, naks = 0, rnr_naks = 0;  // naks: PSN sequence error NAKs
  uint64_t other_naks = 0;        // NAKs with another code (invalid request, access, operational)
  uint64_t packets_per_message = 0;  // the most fresh request packets of one message (First..Last, or Only)
  uint64_t ecn_marked = 0, cnps = 0;  // responses arriving with ECN CE; CNPs arriving
  // Go-back-N: after a NAK the next request is the NAK's PSN, after a timeout the oldest
  // unacknowledged one; a new PSN is never more than one past the highest sent. Empty: kept.
  std::string go_back_n_violation;
  // Each retransmission that no NAK asked for: microseconds since the last request before it.
  std::vector<double> timeout_gaps_us;
  // Each NAK (PSN sequence error): microseconds from the first transmission of the PSN it
  // names (the lost packet, as the requester sent it) to the NAK's arrival.
  std::vector<double> nak_delays_us;
  // RDMA READ requests outstanding at once (sent, their last response not yet back): at most
  // the QP's max_rd_atomic if the requester keeps to it.
  uint64_t max_reads_in_flight = 0;
  // Each RNR NAK's timer field, and microseconds from it to the next request.
  std::vector<uint8_t> rnr_timers;
  std::vector<double> rnr_gaps_us;
};

// The facts of the requester `self` talking to `peer` in `packets` (capture order).
QpWireFacts analyze_requester(const std::vector<RocePacket>& packets, const QpAddress& self, const QpAddress& peer);

// IBTA's RNR NAK timer encoding (vol. 1 table 45) in microseconds: 0 is 655.36 ms, 1 is 10 us ...
double rnr_timer_us(uint8_t code);
// The local ACK timeout 4.096 us x 2^timeout in microseconds (0: infinite, returned as 0).
double ack_timeout_us(uint8_t timeout);

}  // namespace qpo::wire
