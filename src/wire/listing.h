#pragma once
// A capture as an RDMA engineer reads it: packets grouped by flow (the QP they are sent to),
// each marked when it carries a PSN its flow already carried (a retransmission), and rows of
// time, direction, opcode, PSN, AETH and size. The flows are named by the run's own QPs when
// it wrote them beside the pcap (flow_names), else by address and QP number.
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "wire/roce_packet.h"

namespace qpo::wire {

struct ListedPacket {
  const RocePacket* packet = nullptr;
  double t_us = 0;            // since the capture's first packet
  bool retransmission = false;
  uint32_t transmission = 1;  // 1: first time this PSN went out on its flow, 2: its first retransmission...
};

struct Flow {
  std::array<uint8_t, 16> src{}, dst{};
  uint32_t dest_qpn = 0;
  std::string name;           // "qa -> qb" when the run named it, else "10.0.1.1 -> 10.0.1.2 QP 0x11"
  std::vector<ListedPacket> packets;
  uint32_t retransmissions = 0;
};

// A QP the run knew: its address and number, and its name (written beside the pcap).
struct KnownQp {
  std::string name;
  std::array<uint8_t, 16> gid{};
  uint32_t qpn = 0;
};

// The flows of `packets` (in capture order), each in time order, flows in order of their first
// packet. `known` names the receiving QP (and the sending one, for RC: its connected peer).
std::vector<Flow> group_flows(const std::vector<RocePacket>& packets, const std::vector<KnownQp>& known = {});

// One line per packet: "   812.345 us  10.0.1.1 > 10.0.1.2  RC RDMA Write Middle  psn 0x00a104  1024 B  RETX 2".
std::string listing_text(const std::vector<Flow>& flows);
// The same as JSON: one object {file, flows[], each with its packets[]}.
std::string listing_json(const std::vector<Flow>& flows, const std::string& file);

}  // namespace qpo::wire

namespace qpo::wire {

// The QPs a run wrote beside its pcap (`FILE.pcap.qps.json`: {"qps": [{"name", "qpn", "gid"}]}):
// empty when there is no such file; `error` says why a file that is there cannot be read.
std::vector<KnownQp> read_known_qps(const std::string& pcap_path, std::string* error);
// Writes that file.
bool write_known_qps(const std::string& pcap_path, const std::vector<KnownQp>& qps, std::string* error);

}  // namespace qpo::wire
