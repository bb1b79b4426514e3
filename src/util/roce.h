#pragma once
// RoCEv2 on the wire: one copy of its facts for the faults' u32 filters (exec/faults.cpp) and
// the plan's fault step text (plan/planner.cpp).
namespace qpo::util {

// RoCEv2's UDP destination port (IANA 4791): verbs traffic and the CM's MADs (QP1) both use it.
inline constexpr const char* kRoceV2UdpPort = "4791";

}  // namespace qpo::util
