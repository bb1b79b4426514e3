#include "wire/bth_opcodes.h"

#include <array>

namespace qpo::wire {

namespace {

constexpr uint8_t kNone = 0;
using R = Role;

// Transport prefix (bits 7-5): 000 RC, 001 UC, 011 UD; 0x81 is RoCEv2's CNP.
constexpr OpcodeInfo kOpcodes[] = {
    {0x00, "RC Send First", kNone, R::Request},
    {0x01, "RC Send Middle", kNone, R::Request},
    {0x02, "RC Send Last", kNone, R::Request},
    {0x03, "RC Send Last Immediate", kImm, R::Request},
    {0x04, "RC Send Only", kNone, R::Request},
    {0x05, "RC Send Only Immediate", kImm, R::Request},
    {0x06, "RC RDMA Write First", kReth, R::Request},
    {0x07, "RC RDMA Write Middle", kNone, R::Request},
    {0x08, "RC RDMA Write Last", kNone, R::Request},
    {0x09, "RC RDMA Write Last Immediate", kImm, R::Request},
    {0x0A, "RC RDMA Write Only", kReth, R::Request},
    {0x0B, "RC RDMA Write Only Immediate", kReth | kImm, R::Request},
    {0x0C, "RC RDMA Read Request", kReth, R::Request},
    {0x0D, "RC RDMA Read Response First", kAeth, R::Response},
    {0x0E, "RC RDMA Read Response Middle", kNone, R::Response},
    {0x0F, "RC RDMA Read Response Last", kAeth, R::Response},
    {0x10, "RC RDMA Read Response Only", kAeth, R::Response},
    {0x11, "RC Acknowledge", kAeth, R::Response},
    {0x12, "RC Atomic Acknowledge", kAeth | kAtomicAck, R::Response},
    {0x13, "RC CmpSwap", kAtomicEth, R::Request},
    {0x14, "RC FetchAdd", kAtomicEth, R::Request},
    {0x16, "RC Send Last Invalidate", kIeth, R::Request},
    {0x17, "RC Send Only Invalidate", kIeth, R::Request},
    {0x20, "UC Send First", kNone, R::Request},
    {0x21, "UC Send Middle", kNone, R::Request},
    {0x22, "UC Send Last", kNone, R::Request},
    {0x23, "UC Send Last Immediate", kImm, R::Request},
    {0x24, "UC Send Only", kNone, R::Request},
    {0x25, "UC Send Only Immediate", kImm, R::Request},
    {0x26, "UC RDMA Write First", kReth, R::Request},
    {0x27, "UC RDMA Write Middle", kNone, R::Request},
    {0x28, "UC RDMA Write Last", kNone, R::Request},
    {0x29, "UC RDMA Write Last Immediate", kImm, R::Request},
    {0x2A, "UC RDMA Write Only", kReth, R::Request},
    {0x2B, "UC RDMA Write Only Immediate", kReth | kImm, R::Request},
    {0x64, "UD Send Only", kDeth, R::Request},
    {0x65, "UD Send Only Immediate", kDeth | kImm, R::Request},
    {0x81, "CNP", kNone, R::Cnp},
};

constexpr std::array<const OpcodeInfo*, 256> by_code() {
  std::array<const OpcodeInfo*, 256> t{};
  for (const auto& o : kOpcodes) t[o.code] = &o;
  return t;
}
constexpr auto kByCode = by_code();

}  // namespace

const OpcodeInfo* opcode_info(uint8_t code) { return kByCode[code]; }

}  // namespace qpo::wire
