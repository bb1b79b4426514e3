#pragma once
// Latency on the device's clock: the completion timestamps a device writes into the CQEs of
// an extended CQ (IBV_WC_EX_WITH_COMPLETION_TIMESTAMP), turned into per-iteration times.
// A ping-pong initiator signals every WR; its completion i is stamped by the device, and the
// time between completions i-1 and i is one iteration counted on the device's clock: the same
// round trip as the host clock's post-to-post window (the host noticing the reply and posting
// is inside it), shifted by the ACK or response, and read off the device's clock instead of
// the TSC. n iterations give n - 1 times.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace qpo::dataplane {

// Ticks between two timestamps of a clock that wraps at `mask` (completion_timestamp_mask,
// all ones up to its top bit): b taken after a, at most one wrap apart.
inline uint64_t ticks_between(uint64_t a, uint64_t b, uint64_t mask) { return (b - a) & mask; }

// The intervals between consecutive timestamps, in microseconds, each divided by `div`
// (2 for half round trips). `khz` is hca_core_clock (ticks per millisecond), > 0.
std::vector<double> device_intervals_us(const std::vector<uint64_t>& stamps, uint64_t mask, uint64_t khz, double div);

}  // namespace qpo::dataplane
