#pragma once
// What a workload gets for what it does not say: one table for both runners. An op workload
// (`op:`, exec's op loop) takes the `op` row; the built-in scripts take perftest's own
// defaults, the `bandwidth` row for the *_bw tools (and a Lua stream, qp:stream{}) and the
// `latency` row for the *_lat tools (and a ping-pong, qp:pingpong{}). Lua sees the same rows
// as qpo.workload_defaults (lua/qpo/perf.lua reads them); README "Workload defaults" prints
// them (a golden test holds the two equal).
#include <array>
#include <cstdint>

namespace qpo::util {

struct WorkloadDefaults {
  const char* name;     // the row: "op", "bandwidth", "latency"
  uint64_t size;        // bytes per message
  uint64_t iterations;  // messages (round trips for latency)
  uint32_t tx_depth;    // send WRs in flight (perftest -t); 0: none of its own (the QP's caps decide)
  uint32_t rx_depth;    // receives posted ahead (perftest -r); 0: none of its own
};

inline constexpr WorkloadDefaults kOpDefaults{"op", 4096, 1000, 0, 0};
inline constexpr WorkloadDefaults kBandwidthDefaults{"bandwidth", 65536, 5000, 128, 512};
inline constexpr WorkloadDefaults kLatencyDefaults{"latency", 2, 1000, 0, 16};
inline constexpr std::array<WorkloadDefaults, 3> kWorkloadDefaults{kOpDefaults, kBandwidthDefaults, kLatencyDefaults};

}  // namespace qpo::util
