#include "dataplane/pattern.h"

#include <cstring>

namespace qpo::dataplane {

namespace {

// splitmix64: a cheap, well-mixed function of (seed, word index); any bit of either changes
// about half of the output bits.
inline uint64_t word(uint64_t seed, uint64_t index) {
  uint64_t z = seed * 0x9E3779B97F4A7C15ull + index * 0xBF58476D1CE4E5B9ull + 0x94D049BB133111EBull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

uint8_t pattern_byte(uint64_t seed, uint64_t i) { return static_cast<uint8_t>(word(seed, i / 8) >> ((i % 8) * 8)); }

void fill_pattern(uint8_t* p, size_t len, uint64_t seed, uint64_t from) {
  size_t i = 0;
  // Unaligned head, whole 8-byte words, tail: the words are stored little-endian-by-shift so
  // the result does not depend on the host's byte order.
  for (; i < len && (from + i) % 8 != 0; ++i) p[i] = pattern_byte(seed, from + i);
  for (; i + 8 <= len; i += 8) {
    uint64_t w = word(seed, (from + i) / 8);
    uint8_t b[8];
    for (int k = 0; k < 8; ++k) b[k] = static_cast<uint8_t>(w >> (k * 8));
    std::memcpy(p + i, b, 8);
  }
  for (; i < len; ++i) p[i] = pattern_byte(seed, from + i);
}

int64_t check_pattern(const uint8_t* p, size_t len, uint64_t seed, uint64_t from) {
  // Compare in chunks against a generated copy: memcmp is the fast path; the byte loop only
  // runs to locate the first difference.
  uint8_t chunk[4096];
  for (size_t done = 0; done < len;) {
    size_t n = len - done < sizeof chunk ? len - done : sizeof chunk;
    fill_pattern(chunk, n, seed, from + done);
    if (std::memcmp(chunk, p + done, n) != 0)
      for (size_t k = 0; k < n; ++k)
        if (chunk[k] != p[done + k]) return static_cast<int64_t>(done + k);
    done += n;
  }
  return -1;
}

}  // namespace qpo::dataplane
