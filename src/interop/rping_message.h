#pragma once
// rping's messages (librdmacm/examples/rping.c), so a stock rping can be the other end: each
// SEND carries struct rping_rdma_info, a buffer's {addr, rkey, size}, big endian, 16 bytes; the
// server's go-ahead is a SEND of the same size whose bytes mean nothing. The client fills its
// start buffer with "rdma-ping-N: " and letters, NUL-terminated; rping -v prints it.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace qpo::interop {

inline constexpr size_t kRpingInfoBytes = 16;
// rping -S: at least sizeof(stringify(INT_MAX)) + sizeof("rdma-ping-%d: "), below RPING_BUFSIZE (64 KiB).
inline constexpr uint64_t kRpingMinSize = 26, kRpingMaxSize = 64 * 1024 - 1;
inline constexpr uint16_t kRpingPort = 7174;  // rping's default -p

struct RpingInfo {
  uint64_t addr = 0;
  uint32_t rkey = 0;
  uint32_t size = 0;
};

std::vector<uint8_t> format_rping_info(const RpingInfo& i);
// nullopt when `bytes` is not 16 bytes long (*why says what it is).
std::optional<RpingInfo> parse_rping_info(std::span<const uint8_t> bytes, std::string* why);

// Ping `ping`'s start buffer as rping's client writes it: "rdma-ping-<ping>: " then letters
// from 'A' + ping (wrapping 'z' -> 'A'), the last byte NUL. `out` is the buffer (its size >= 2).
void fill_rping_buffer(std::span<uint8_t> out, int ping);

}  // namespace qpo::interop
