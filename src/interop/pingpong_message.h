#pragma once
// ibv_rc_pingpong's address message (rdma-core libibverbs/examples): "LID:QPN:PSN:GID" as
// `%04x:%06x:%06x:` and the GID's 16 bytes as 32 lowercase hex digits, then a NUL: 52 bytes,
// sent in one write. The client sends it first; the server answers with its own; the client
// ends with "done" and its NUL (5 bytes).
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace qpo::interop {

struct PingpongAddress {
  uint16_t lid = 0;
  uint32_t qpn = 0, psn = 0;       // 24 bits each
  std::array<uint8_t, 16> gid{};   // network order, as ibv_gid.raw
};

constexpr size_t kPingpongMessageBytes = 52;  // sizeof "0000:000000:000000:" + 32 hex digits
constexpr std::string_view kPingpongDone{"done", 5};  // with its NUL

// The 52 bytes the tool reads (the NUL included).
std::string format_pingpong_message(const PingpongAddress& a);
// The tool's message; nullopt with `why` when it is not one ("QPN 'zz' is not hex").
std::optional<PingpongAddress> parse_pingpong_message(std::string_view bytes, std::string* why);
// "LID 0x0000, QPN 0x000011, PSN 0x3a5b1c, GID ::ffff:10.0.1.2": as the tool prints its lines.
std::string describe(const PingpongAddress& a);

}  // namespace qpo::interop
