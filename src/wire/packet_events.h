#pragma once
// Deterministic packet events on a netdev's ingress: qpo's tc BPF program (bpf/packet_events.bpf.c,
// built by clang for the bpf target, embedded, loaded with libbpf), its rules, and what it did.
// The hook is removed on destruction, on every path; a clsact qdisc qpo made goes with it, one
// that was there stays (other filters in it are left alone).
#include <cstdint>
#include <string>
#include <vector>

#include "util/packet_event_names.h"

namespace qpo::wire {

enum class EventMatch : uint32_t { Psn = 0, Nth = 1 };
using util::EventAction;
using util::EventPackets;

struct EventRule {
  uint32_t dest_qpn = 0;  // the receiving QP on this host
  EventMatch match = EventMatch::Psn;
  uint32_t value = 0;     // relative PSN, or N (1: the first counted packet)
  uint32_t transmission = 1;  // Psn: 0 every, k the kth
  EventAction action = EventAction::Drop;
  EventPackets packets = EventPackets::Requests;
};

struct EventHit {
  uint64_t ns = 0;        // CLOCK_MONOTONIC
  uint32_t rule = 0, psn = 0, transmission = 0;
  uint8_t opcode = 0;
};

// Where the program runs: the netdev's ingress (a clsact hook), or as a filter of the prio
// qdisc QPO_PRIO_HANDLE on its egress (delays: the caller made that qdisc and its netem band).
enum class EventHook { Ingress, EgressPrio };
// The prio qdisc's handle a delay's caller makes (its band 3 holds the netem): QPO_PRIO_HANDLE.
inline constexpr uint32_t kDelayPrioHandle = 0x5150;

class PacketEvents {
 public:
  // Loads the program with `rules` (at most kMaxRules) and attaches it to `netdev` at `hook`.
  // Throws std::runtime_error naming the netdev, the libbpf call and its errno (and the
  // verifier's last words when it refused the program).
  PacketEvents(const std::string& netdev, const std::vector<EventRule>& rules, EventHook hook = EventHook::Ingress);
  ~PacketEvents();
  PacketEvents(const PacketEvents&) = delete;
  PacketEvents& operator=(const PacketEvents&) = delete;
  static constexpr size_t kMaxRules = 32;

  // Packets each rule acted on, and the first kMaxHits of them in order.
  std::vector<uint32_t> hits_per_rule() const;
  std::vector<EventHit> hits() const;
  // Detaches now; "" or why it failed (the destructor detaches quietly if this was not called).
  std::string remove();
  const std::string& netdev() const { return netdev_; }

 private:
  std::string destroy_hook();  // the clsact qdisc, when qpo made it; "" or why not
  std::string netdev_;
  struct Impl;
  Impl* impl_ = nullptr;
};

}  // namespace qpo::wire
