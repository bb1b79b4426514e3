#pragma once
// RoCEv2 on the wire: one copy of its facts for the faults' u32 filters (exec/faults.cpp) and
// the plan's fault step text (plan/planner.cpp).
#include <cstdint>
#include <cstdio>
#include <string>

namespace qpo::util {

// RoCEv2's UDP destination port (IANA 4791): verbs traffic and the CM's MADs (QP1) both use it.
inline constexpr const char* kRoceV2UdpPort = "4791";

// A 24-bit PSN as the listings, analyses and the HTML report print it: 0x + 6 digits.
inline std::string psn_hex(uint32_t psn) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%06x", psn & 0xffffffu);
  return buf;
}

}  // namespace qpo::util
