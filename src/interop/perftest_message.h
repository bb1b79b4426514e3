#pragma once
// perftest's out-of-band messages over TCP (linux-rdma/perftest, perftest_communication.c), as
// the Debian tools (ib_write_bw, ib_read_bw, ib_send_bw: version 6.06) send them. Every unit is
// one write() that the other side reads with one read() of exactly its size:
//   version      16 bytes, a NUL-padded string ("6.06"); a peer below 5.70 is refused
//   cycle buffer 4 bytes, big-endian int (the page size); each side takes the larger
//   cache line   4 bytes, big-endian int; each side takes the larger
//   MTU          2 bytes, the ibv_mtu enum as one ASCII digit and a NUL ("3" = 1024)
//   keys         108 bytes on RoCE (a GID is in use): "%04x:%04x:%06x:%06x:%08x:%016llx:" (LID,
//                out_reads, QPN, PSN, rkey, vaddr), the GID's 16 bytes as "%02x:", the SRQ
//                number as "%08x:", then a NUL
//   bw report    five units: size and iterations (8-byte big-endian integers), BW peak, BW
//                average (MB/s) and message rate (Mpps) (8-byte big-endian doubles)
//   done         "done" and its NUL, after the last keys; nobody reads it
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace qpo::interop {

// What a perftest side tells the other about its QP and its buffer (struct pingpong_dest).
struct PerftestKeys {
  uint16_t lid = 0;
  uint16_t out_reads = 1;        // the RDMA READs it accepts at once: the other's max_rd_atomic
  uint32_t qpn = 0, psn = 0;     // 24 bits each
  uint32_t rkey = 0;
  uint64_t vaddr = 0;            // where the other side writes to or reads from
  std::array<uint8_t, 16> gid{}; // network order, as ibv_gid.raw
  uint32_t srqn = 0;
};

// The figures a bandwidth test's client sends its server after the run (xchg_bw_reports),
// which the server prints as the run's result.
struct PerftestReport {
  uint64_t size = 0, iterations = 0;
  double bw_peak = 0, bw_avg = 0;  // MB/s (2^20 bytes)
  double msg_rate = 0;             // Mpps
};

constexpr size_t kPerftestVersionBytes = 16;
constexpr size_t kPerftestKeysBytes = 108;  // with a GID: what every RoCE run sends
constexpr std::string_view kPerftestVersion = "6.06";  // the protocol qpo speaks (Debian 12's perftest)
constexpr double kPerftestOldestVersion = 5.70;        // what 6.06 itself accepts of its peer
constexpr uint32_t kPerftestCycleBuffer = 4096, kPerftestCacheLine = 64;
constexpr std::string_view kPerftestDone{"done", 5};  // with its NUL

std::string format_perftest_version(std::string_view version);
// The peer's version string; nullopt with `why` when it is older than qpo's peers accept.
std::optional<std::string> parse_perftest_version(std::string_view bytes, std::string* why);

std::string format_be32(uint32_t v);
std::optional<uint32_t> parse_be32(std::string_view bytes);

// The MTU unit: enum ibv_mtu (1 = 256 ... 5 = 4096).
std::string format_perftest_mtu(int mtu_enum);
// The peer's enum; nullopt when it is not 1..5 (the tool then keeps its own).
std::optional<int> parse_perftest_mtu(std::string_view bytes);

std::string format_perftest_keys(const PerftestKeys& k);
std::optional<PerftestKeys> parse_perftest_keys(std::string_view bytes, std::string* why);
// Over the tool's RDMA connection (-R) the keys are its struct pingpong_dest itself, each field
// big-endian (rdma_write_keys): lid, out_reads, qpn, psn, rkey (4 bytes each), 4 bytes of
// padding, vaddr (8), the GID (16), srqn, gid_index (4 each): 56 bytes.
constexpr size_t kPerftestDestBytes = 56;
std::string format_perftest_dest(const PerftestKeys& k);
std::optional<PerftestKeys> parse_perftest_dest(std::string_view bytes, std::string* why);
// "QPN 0x000011, PSN 0x4d3639, RKey 0x0000021c, VAddr 0x000055dbd3344000, GID ::ffff:10.0.1.2".
std::string describe(const PerftestKeys& k);

// The report's five units, in the order they travel.
std::array<std::string, 5> format_perftest_report(const PerftestReport& r);
PerftestReport parse_perftest_report(const std::array<std::string, 5>& units);
constexpr std::array<size_t, 5> kPerftestReportUnitBytes{8, 8, 8, 8, 8};

}  // namespace qpo::interop
