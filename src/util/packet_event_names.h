#pragma once
// The words of a scenario's packet events (`wire: events:`) and their values in qpo's BPF
// program (src/wire/bpf/packet_events.h uses the same numbers): one table, read by the loader,
// the planner's text and the loader of the program.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace qpo::util {

// Delay acts where the packet leaves (the sender's egress, through a netem band); the others
// where it arrives (the receiver's ingress).
enum class EventAction : uint32_t { Drop = 0, Corrupt = 1, EcnCe = 2, Duplicate = 3, Delay = 4 };
// Which packets an event counts: its relative PSN and its Nth are among these.
enum class EventPackets : uint32_t { Any = 0, Requests = 1, Acks = 2, Naks = 3, RnrNaks = 4, ReadResponses = 5 };

const char* event_action_name(EventAction a);    // drop, corrupt, ecn, duplicate, delay
const char* event_packets_name(EventPackets p);  // requests, acks, naks, rnr_naks, read_responses, any
std::optional<EventAction> parse_event_action(std::string_view text);
std::optional<EventPackets> parse_event_packets(std::string_view text);
std::string event_action_names();   // "drop, corrupt, ecn, duplicate"
std::string event_packets_names();

}  // namespace qpo::util
