// interop/rping_message.h without a device: rping's 16-byte buffer message and the text its
// client puts in each ping (librdmacm/examples/rping.c).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "interop/rping_message.h"

using namespace qpo;

TEST_CASE("rping message: {addr, rkey, size} big endian, 16 bytes") {
  auto m = interop::format_rping_info({0x0102030405060708ull, 0x0a0b0c0d, 64});
  CHECK(m == std::vector<uint8_t>{1, 2, 3, 4, 5, 6, 7, 8, 0x0a, 0x0b, 0x0c, 0x0d, 0, 0, 0, 64});
  std::string why;
  auto back = interop::parse_rping_info(m, &why);
  REQUIRE(back);
  CHECK(back->addr == 0x0102030405060708ull);
  CHECK(back->rkey == 0x0a0b0c0du);
  CHECK(back->size == 64u);
}

TEST_CASE("rping message: anything but 16 bytes is not one, and says its size") {
  std::string why;
  CHECK_FALSE(interop::parse_rping_info(std::vector<uint8_t>(100, 0), &why));
  CHECK(why == "100 bytes, not rping's 16-byte {addr, rkey, size}");
}

TEST_CASE("rping buffer: ping 0 is 'rdma-ping-0: ' then letters from A, the last byte NUL") {
  std::vector<uint8_t> b(26);
  interop::fill_rping_buffer(b, 0);
  CHECK(std::string(b.begin(), b.end() - 1) == "rdma-ping-0: ABCDEFGHIJKL");
  CHECK(b.back() == 0);
}

TEST_CASE("rping buffer: each ping starts one letter later, wrapping after z to A") {
  std::vector<uint8_t> b(20);
  interop::fill_rping_buffer(b, 1);
  CHECK(std::string(b.begin(), b.end() - 1) == "rdma-ping-1: BCDEFG");
  interop::fill_rping_buffer(b, 57);  // 'A' + 57 = 'z', then 'A' again
  CHECK(std::string(b.begin(), b.end() - 1) == "rdma-ping-57: zABCD");
}
