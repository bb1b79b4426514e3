#include "util/roce.h"
#include "wire/analyze.h"

#include <algorithm>
#include <map>

#include "wire/bth_opcodes.h"

namespace qpo::wire {

namespace {

bool is_first_or_only(uint8_t opcode) {
  switch (opcode & 0x1f) {
    case 0x00: case 0x04: case 0x05:             // send first/only
    case 0x06: case 0x0A: case 0x0B:             // write first/only
    case 0x0C: case 0x13: case 0x14:             // read request, atomics
    case 0x17:                                   // send only with invalidate
      return true;
    default:
      return false;
  }
}

bool is_last_or_only(uint8_t opcode) {
  switch (opcode & 0x1f) {
    case 0x02: case 0x03: case 0x04: case 0x05:  // send last/only
    case 0x08: case 0x09: case 0x0A: case 0x0B:  // write last/only
    case 0x0C:                                   // read request: one packet
    case 0x13: case 0x14:                        // atomics
    case 0x16: case 0x17:                        // send with invalidate last/only
      return true;
    default:
      return false;
  }
}

}  // namespace

double rnr_timer_us(uint8_t code) {
  static const double kUs[32] = {655360, 10,    20,    30,    40,    60,    80,     120,    160,    240,   320,
                                 480,    640,   960,   1280,  1920,  2560,  3840,   5120,   7680,   10240, 15360,
                                 20480,  30720, 40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520};
  return kUs[code & 31];
}

double ack_timeout_us(uint8_t timeout) { return timeout == 0 ? 0 : 4.096 * static_cast<double>(1ull << std::min<uint8_t>(timeout, 31)); }

QpWireFacts analyze_requester(const std::vector<RocePacket>& packets, const QpAddress& self, const QpAddress& peer) {
  QpWireFacts f;
  bool any = false;
  uint32_t highest = 0;               // the highest request PSN sent
  bool highest_is_read = false;       // it was a READ request, which uses one PSN per response packet
  std::map<uint32_t, uint64_t> sent;  // PSN -> transmissions
  bool have_ack = false;
  uint32_t acked = 0;                 // the PSN the latest ACK acknowledged up to
  bool nak_pending = false, rnr_pending = false;
  uint32_t nak_psn = 0;
  double last_request_t = 0, rnr_t = 0;
  uint32_t last_psn = 0;
  uint64_t in_message = 0;
  std::map<uint32_t, double> first_sent;  // PSN -> its first transmission's time
  // PSNs passed over by a later one: a skip, unless they come late (reordered on the way, as
  // a delay event on the sender's egress does: the capture there sees the packets after it).
  std::map<uint32_t, std::string> passed_over;
  uint64_t reads_out = 0;
  for (const auto& p : packets) {
    const OpcodeInfo* o = opcode_info(p.opcode);
    if (!o) continue;
    if (p.dst == peer.gid && p.dest_qpn == peer.qpn && o->role == Role::Request) {
      ++f.requests;
      uint64_t times = ++sent[p.psn];
      if (times == 1) {
        passed_over.erase(p.psn);
        first_sent.emplace(p.psn, p.time);
        if (p.opcode == 0x0C) f.max_reads_in_flight = std::max(f.max_reads_in_flight, ++reads_out);
      }
      f.max_transmissions = std::max(f.max_transmissions, times);
      if (!any) {
        any = true;
        highest = p.psn;
        highest_is_read = p.opcode == 0x0C;
      } else {
        int32_t ahead = psn_diff(p.psn, highest);
        // A READ of n response packets takes n PSNs: the next request may be that far ahead.
        if (ahead > 1 && !highest_is_read)
          for (int32_t k = 1; k < ahead && passed_over.size() < 4096; ++k)
            passed_over.emplace((highest + static_cast<uint32_t>(k)) & 0xffffff,
                                "PSN " + util::psn_hex(p.psn) + " sent after " + util::psn_hex(highest) + ": " + std::to_string(ahead - 1) +
                                    " PSN(s) skipped");
        if (ahead > 0) {
          highest = p.psn;
          highest_is_read = p.opcode == 0x0C;
        }
      }
      if (times > 1) {
        ++f.retransmissions;
        bool episode_start = psn_diff(p.psn, last_psn) != 1;
        if (episode_start) {
          if (nak_pending && p.psn != nak_psn && f.go_back_n_violation.empty())
            f.go_back_n_violation = "after a NAK for PSN " + util::psn_hex(nak_psn) + " the sender resumed at " + util::psn_hex(p.psn);
          if (!nak_pending && !rnr_pending) {
            f.timeout_gaps_us.push_back((p.time - last_request_t) * 1e6);
            uint32_t oldest = have_ack ? (acked + 1) & 0xffffff : p.psn;
            if (have_ack && psn_diff(p.psn, oldest) > 0 && f.go_back_n_violation.empty())
              f.go_back_n_violation = "after a timeout the sender resumed at " + util::psn_hex(p.psn) +
                                      ", past the oldest unacknowledged PSN " + util::psn_hex(oldest);
          }
        }
      }
      // A new packet queued before the NAK or RNR NAK came does not answer it: the resend does.
      if (times > 1) {
        if (rnr_pending) f.rnr_gaps_us.push_back((p.time - rnr_t) * 1e6);
        nak_pending = rnr_pending = false;
      }
      last_request_t = p.time;
      last_psn = p.psn;
      // A message's packets: the fresh PSNs from its First (or Only) to its Last.
      if (is_first_or_only(p.opcode)) in_message = 0;
      if (times == 1) ++in_message;
      if (times == 1 && is_last_or_only(p.opcode)) {
        f.packets_per_message = std::max(f.packets_per_message, in_message);
        in_message = 0;
      }
      continue;
    }
    if (!(p.dst == self.gid && p.dest_qpn == self.qpn)) continue;
    if (o->role == Role::Cnp) {
      ++f.cnps;
      continue;
    }
    if (p.ecn == 3) ++f.ecn_marked;
    if ((p.opcode == 0x0F || p.opcode == 0x10) && reads_out > 0) --reads_out;  // a read's last (or only) response
    if (!p.syndrome) continue;
    switch (ack_kind(*p.syndrome)) {
      case AckKind::Ack:
        ++f.acks;
        // An ACK of a duplicate repeats an older PSN: what is acknowledged never goes back.
        if (!have_ack || psn_diff(p.psn, acked) > 0) acked = p.psn;
        have_ack = true;
        break;
      case AckKind::RnrNak:
        ++f.rnr_naks;
        f.rnr_timers.push_back(syndrome_value(*p.syndrome));
        rnr_pending = true;
        rnr_t = p.time;
        break;
      case AckKind::Nak:
        if (syndrome_value(*p.syndrome) == 0) {
          ++f.naks;
          if (auto lost = first_sent.find(p.psn); lost != first_sent.end()) f.nak_delays_us.push_back((p.time - lost->second) * 1e6);
          nak_pending = true;
          nak_psn = p.psn;
          // A NAK acknowledges every PSN before its own.
          if (!have_ack || psn_diff((p.psn - 1) & 0xffffff, acked) > 0) acked = (p.psn - 1) & 0xffffff;
          have_ack = true;
        } else {
          ++f.other_naks;
        }
        break;
      default:
        break;
    }
  }
  if (!passed_over.empty() && f.go_back_n_violation.empty()) f.go_back_n_violation = passed_over.begin()->second;
  if (f.max_transmissions == 0 && any) f.max_transmissions = 1;
  return f;
}

}  // namespace qpo::wire
