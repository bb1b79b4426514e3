#pragma once
// The InfiniBand Base Transport Header opcodes qpo meets on RoCEv2 (IBTA vol. 1, 9.2, table 36),
// one table: the name each one prints as, and which extended headers follow the BTH (the
// decoder's offsets and the listing's columns both come from here).
#include <cstdint>
#include <string_view>

namespace qpo::wire {

enum Ext : uint8_t {
  kReth = 1 << 0,       // RDMA extended header (16 B): va, rkey, dma length
  kAeth = 1 << 1,       // ACK extended header (4 B): syndrome, MSN
  kImm = 1 << 2,        // immediate data (4 B)
  kIeth = 1 << 3,       // invalidate (4 B): rkey
  kDeth = 1 << 4,       // datagram (8 B): qkey, source QP
  kAtomicEth = 1 << 5,  // atomic request (28 B)
  kAtomicAck = 1 << 6,  // atomic ACK (8 B): original value
};

// What the packet is within the protocol: a request the requester sends, or a response
// (ACK/NAK, read response, atomic ACK) the responder sends back in the requester's PSN space.
enum class Role : uint8_t { Request, Response, Cnp };

struct OpcodeInfo {
  uint8_t code;
  std::string_view name;  // tshark's spelling, lower-case words: "RC RDMA WRITE First"
  uint8_t ext;            // Ext bits, in wire order RETH/DETH, then AETH/IETH/ImmDt/atomic
  Role role;
};

// nullptr for an opcode the table does not know (reserved or RD).
const OpcodeInfo* opcode_info(uint8_t code);

}  // namespace qpo::wire
