#include "interop/rping_message.h"

#include <algorithm>
#include <cstdio>

namespace qpo::interop {

namespace {

void put_be(std::vector<uint8_t>& out, uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

uint64_t get_be(std::span<const uint8_t> in, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v = v << 8 | in[at + static_cast<size_t>(i)];
  return v;
}

}  // namespace

std::vector<uint8_t> format_rping_info(const RpingInfo& i) {
  std::vector<uint8_t> out;
  out.reserve(kRpingInfoBytes);
  put_be(out, i.addr, 8);
  put_be(out, i.rkey, 4);
  put_be(out, i.size, 4);
  return out;
}

std::optional<RpingInfo> parse_rping_info(std::span<const uint8_t> bytes, std::string* why) {
  if (bytes.size() != kRpingInfoBytes) {
    if (why) *why = std::to_string(bytes.size()) + " bytes, not rping's 16-byte {addr, rkey, size}";
    return std::nullopt;
  }
  return RpingInfo{get_be(bytes, 0, 8), static_cast<uint32_t>(get_be(bytes, 8, 4)), static_cast<uint32_t>(get_be(bytes, 12, 4))};
}

// rping.c's rping_test_client: snprintf(start_buf, size, "rdma-ping-%d: ", ping), then letters
// from `start` (65 + ping, wrapping past 122 back to 65), the last byte 0.
void fill_rping_buffer(std::span<uint8_t> out, int ping) {
  if (out.size() < 2) return;
  char head[40];
  int cc = std::snprintf(head, sizeof head, "rdma-ping-%d: ", ping);
  size_t n = std::min(out.size() - 1, static_cast<size_t>(cc > 0 ? cc : 0));
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<uint8_t>(head[i]);
  unsigned char c = static_cast<unsigned char>(65 + ping % 58);
  for (size_t i = n; i < out.size(); ++i) {
    out[i] = c;
    if (++c > 122) c = 65;
  }
  out[out.size() - 1] = 0;
}

}  // namespace qpo::interop
