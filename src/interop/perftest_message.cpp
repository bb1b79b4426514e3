#include "interop/perftest_message.h"

#include <arpa/inet.h>
#include <algorithm>

#include <bit>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "interop/hex_field.h"
#include "util/strings.h"

namespace qpo::interop {

namespace {

std::string be64_bytes(uint64_t v) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[static_cast<size_t>(i)] = static_cast<char>(v >> (56 - 8 * i));
  return out;
}

uint64_t be64_value(std::string_view b) {
  uint64_t v = 0;
  for (size_t i = 0; i < 8 && i < b.size(); ++i) v = v << 8 | static_cast<uint8_t>(b[i]);
  return v;
}

}  // namespace

std::string format_perftest_version(std::string_view version) {
  std::string out(kPerftestVersionBytes, '\0');
  out.replace(0, std::min(version.size(), kPerftestVersionBytes - 1), version.substr(0, kPerftestVersionBytes - 1));
  return out;
}

std::optional<std::string> parse_perftest_version(std::string_view bytes, std::string* why) {
  std::string v(bytes.substr(0, bytes.find('\0')));
  bool plain = !v.empty() && v.find_first_not_of("0123456789.") == std::string::npos;
  if (!plain) {  // another tool on the port: its first bytes are not a version at all
    *why = "sent '" + util::printable(v, 64) + "' where perftest sends its version: is the tool on that port perftest?";
    return std::nullopt;
  }
  double number = std::strtod(v.c_str(), nullptr);  // as the tool reads it (atof)
  if (number < kPerftestOldestVersion) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "perftest version '%s' is older than %.2f, the oldest whose exchange qpo speaks",
                  v.c_str(), kPerftestOldestVersion);
    *why = buf;
    return std::nullopt;
  }
  return v;
}

std::string format_be32(uint32_t v) {
  uint32_t n = htonl(v);
  return std::string(reinterpret_cast<const char*>(&n), 4);
}

std::optional<uint32_t> parse_be32(std::string_view bytes) {
  if (bytes.size() != 4) return std::nullopt;
  uint32_t n;
  std::memcpy(&n, bytes.data(), 4);
  return ntohl(n);
}

std::string format_perftest_mtu(int mtu_enum) {
  std::string out(2, '\0');
  out[0] = static_cast<char>('0' + mtu_enum);
  return out;
}

std::optional<int> parse_perftest_mtu(std::string_view bytes) {
  if (bytes.empty() || bytes[0] < '1' || bytes[0] > '5') return std::nullopt;
  if (bytes.size() > 1 && bytes[1] != '\0') return std::nullopt;
  return bytes[0] - '0';
}

std::string format_perftest_keys(const PerftestKeys& k) {
  char buf[kPerftestKeysBytes + 8];
  int n = std::snprintf(buf, sizeof buf, "%04x:%04x:%06x:%06x:%08x:%016llx:", k.lid, k.out_reads, k.qpn & 0xFFFFFF,
                        k.psn & 0xFFFFFF, k.rkey, static_cast<unsigned long long>(k.vaddr));
  for (uint8_t b : k.gid) n += std::snprintf(buf + n, sizeof buf - static_cast<size_t>(n), "%02x:", b);
  std::snprintf(buf + n, sizeof buf - static_cast<size_t>(n), "%08x:", k.srqn);
  std::string out(buf);
  out.resize(kPerftestKeysBytes, '\0');  // 107 characters and the NUL
  return out;
}

std::optional<PerftestKeys> parse_perftest_keys(std::string_view bytes, std::string* why) {
  auto fail = [&](const std::string& m) -> std::optional<PerftestKeys> {
    *why = m;
    return std::nullopt;
  };
  if (bytes.size() != kPerftestKeysBytes)
    return fail(std::to_string(bytes.size()) + " bytes, not the " + std::to_string(kPerftestKeysBytes) +
                " of perftest's keys with a GID");
  std::string_view text = bytes.substr(0, bytes.find('\0'));
  std::vector<std::string_view> f;
  while (!text.empty()) {
    size_t colon = text.find(':');
    f.push_back(text.substr(0, colon));
    if (colon == std::string_view::npos) break;
    text.remove_prefix(colon + 1);
  }
  if (f.size() != 23) return fail("'" + std::string(bytes.substr(0, bytes.find('\0'))) + "' has " + std::to_string(f.size()) +
                                  " ':'-separated fields, not the 23 of perftest's keys with a GID");
  static const char* names[] = {"LID", "out_reads", "QPN", "PSN", "rkey", "vaddr"};
  static const size_t widths[] = {4, 4, 6, 6, 8, 16};
  uint64_t v[6];
  for (size_t i = 0; i < 6; ++i) {
    auto x = hex_field(f[i], widths[i]);
    if (!x) return fail(std::string(names[i]) + " '" + std::string(f[i]) + "' is not up to " + std::to_string(widths[i]) + " hex digits");
    v[i] = *x;
  }
  PerftestKeys k;
  k.lid = static_cast<uint16_t>(v[0]);
  k.out_reads = static_cast<uint16_t>(v[1]);
  k.qpn = static_cast<uint32_t>(v[2]);
  k.psn = static_cast<uint32_t>(v[3]);
  k.rkey = static_cast<uint32_t>(v[4]);
  k.vaddr = v[5];
  for (size_t i = 0; i < 16; ++i) {
    auto b = hex_field(f[6 + i], 2);
    if (!b) return fail("GID byte " + std::to_string(i) + " '" + std::string(f[6 + i]) + "' is not up to 2 hex digits");
    k.gid[i] = static_cast<uint8_t>(*b);
  }
  auto srqn = hex_field(f[22], 8);
  if (!srqn) return fail("SRQ number '" + std::string(f[22]) + "' is not up to 8 hex digits");
  k.srqn = static_cast<uint32_t>(*srqn);
  return k;
}

namespace {

void put_be(std::string& out, uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

uint64_t get_be(std::string_view bytes, size_t at, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v = (v << 8) | static_cast<unsigned char>(bytes[at + static_cast<size_t>(i)]);
  return v;
}

}  // namespace

std::string format_perftest_dest(const PerftestKeys& k) {
  std::string out;
  out.reserve(kPerftestDestBytes);
  put_be(out, k.lid, 4);
  put_be(out, k.out_reads, 4);
  put_be(out, k.qpn, 4);
  put_be(out, k.psn, 4);
  put_be(out, k.rkey, 4);
  out.append(4, '\0');  // vaddr is 8-aligned in the struct
  put_be(out, k.vaddr, 8);
  out.append(reinterpret_cast<const char*>(k.gid.data()), k.gid.size());
  put_be(out, k.srqn, 4);
  put_be(out, 0, 4);  // gid_index: the tool does not read it back
  return out;
}

std::optional<PerftestKeys> parse_perftest_dest(std::string_view bytes, std::string* why) {
  if (bytes.size() != kPerftestDestBytes) {
    *why = std::to_string(bytes.size()) + " bytes, not perftest's " + std::to_string(kPerftestDestBytes);
    return std::nullopt;
  }
  PerftestKeys k;
  k.lid = static_cast<uint16_t>(get_be(bytes, 0, 4));
  k.out_reads = static_cast<uint16_t>(get_be(bytes, 4, 4));
  k.qpn = static_cast<uint32_t>(get_be(bytes, 8, 4)) & 0xFFFFFF;
  k.psn = static_cast<uint32_t>(get_be(bytes, 12, 4)) & 0xFFFFFF;
  k.rkey = static_cast<uint32_t>(get_be(bytes, 16, 4));
  k.vaddr = get_be(bytes, 24, 8);
  std::copy(bytes.begin() + 32, bytes.begin() + 48, k.gid.begin());
  k.srqn = static_cast<uint32_t>(get_be(bytes, 48, 4));
  return k;
}

std::string describe(const PerftestKeys& k) {
  char head[128];
  std::snprintf(head, sizeof head, "QPN 0x%06x, PSN 0x%06x, RKey 0x%08x, VAddr 0x%016llx, GID ", k.qpn, k.psn, k.rkey,
                static_cast<unsigned long long>(k.vaddr));
  char gid[INET6_ADDRSTRLEN] = "?";
  inet_ntop(AF_INET6, k.gid.data(), gid, sizeof gid);
  return std::string(head) + gid;
}

std::array<std::string, 5> format_perftest_report(const PerftestReport& r) {
  return {be64_bytes(r.size), be64_bytes(r.iterations), be64_bytes(std::bit_cast<uint64_t>(r.bw_peak)),
          be64_bytes(std::bit_cast<uint64_t>(r.bw_avg)), be64_bytes(std::bit_cast<uint64_t>(r.msg_rate))};
}

PerftestReport parse_perftest_report(const std::array<std::string, 5>& u) {
  PerftestReport r;
  r.size = be64_value(u[0]);
  r.iterations = be64_value(u[1]);
  r.bw_peak = std::bit_cast<double>(be64_value(u[2]));
  r.bw_avg = std::bit_cast<double>(be64_value(u[3]));
  r.msg_rate = std::bit_cast<double>(be64_value(u[4]));
  return r;
}

}  // namespace qpo::interop
