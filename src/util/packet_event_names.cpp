#include "util/packet_event_names.h"

namespace qpo::util {

namespace {

struct ActionName {
  EventAction value;
  const char* text;
};
constexpr ActionName kActions[] = {{EventAction::Drop, "drop"},
                                   {EventAction::Corrupt, "corrupt"},
                                   {EventAction::EcnCe, "ecn"},
                                   {EventAction::Duplicate, "duplicate"},
                                   {EventAction::Delay, "delay"}};

struct PacketsName {
  EventPackets value;
  const char* text;
};
constexpr PacketsName kPackets[] = {{EventPackets::Requests, "requests"},   {EventPackets::Acks, "acks"},
                                    {EventPackets::Naks, "naks"},           {EventPackets::RnrNaks, "rnr_naks"},
                                    {EventPackets::ReadResponses, "read_responses"}, {EventPackets::Any, "any"}};

}  // namespace

const char* event_action_name(EventAction a) {
  for (const auto& n : kActions)
    if (n.value == a) return n.text;
  return "?";
}

const char* event_packets_name(EventPackets p) {
  for (const auto& n : kPackets)
    if (n.value == p) return n.text;
  return "?";
}

std::optional<EventAction> parse_event_action(std::string_view text) {
  for (const auto& n : kActions)
    if (text == n.text) return n.value;
  return std::nullopt;
}

std::optional<EventPackets> parse_event_packets(std::string_view text) {
  for (const auto& n : kPackets)
    if (text == n.text) return n.value;
  return std::nullopt;
}

std::string event_action_names() {
  std::string out;
  for (const auto& n : kActions) out += (out.empty() ? "" : ", ") + std::string(n.text);
  return out;
}

std::string event_packets_names() {
  std::string out;
  for (const auto& n : kPackets) out += (out.empty() ? "" : ", ") + std::string(n.text);
  return out;
}

}  // namespace qpo::util
