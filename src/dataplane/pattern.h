#pragma once
// Deterministic buffer contents for data checks: byte i of a region filled with seed s is a
// function of (s, i), so data that lands at the wrong offset, or stale data from an earlier
// message, is caught, not only corruption.
#include <cstddef>
#include <cstdint>

namespace qpo::dataplane {

// Fills p[0..len) with the pattern for `seed`, as if the region started at pattern offset `from`
// (so a slice of a larger filled region can be checked on its own).
void fill_pattern(uint8_t* p, size_t len, uint64_t seed, uint64_t from = 0);
// Index of the first byte of p[0..len) that differs from the pattern, or -1 when all match.
int64_t check_pattern(const uint8_t* p, size_t len, uint64_t seed, uint64_t from = 0);
// The expected byte at pattern offset i (for messages: "expected 0x3a, found 0x00").
uint8_t pattern_byte(uint64_t seed, uint64_t i);

}  // namespace qpo::dataplane
