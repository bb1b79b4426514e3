#pragma once
// What `wire: expect:` can assert about a QP from its host's capture (wire/analyze.h computes
// them): one table of names, kinds and meanings, read by the loader, the plan's text and the
// check in exec.
#include <optional>
#include <string>
#include <string_view>

namespace qpo::util {

enum class WireFact {
  Requests, Retransmissions, MaxTransmissions, Acks, Naks, RnrNaks, OtherNaks, PacketsPerMessage, EcnMarked, Cnps,
  MaxReadsInFlight,
  GoBackN,           // true: the sender kept go-back-N
  RetransmitTimeout, // the median gap before a timeout-driven retransmission within a factor of 4.096 us x 2^timeout
  RnrDelay,          // the median gap from an RNR NAK to the resend within a factor of the NAK's timer
};
enum class WireFactKind { Count, Flag, Factor };

struct WireFactInfo {
  WireFact fact;
  const char* name;
  WireFactKind kind;
  const char* meaning;
};

const WireFactInfo& wire_fact_info(WireFact f);
std::optional<WireFact> parse_wire_fact(std::string_view name);
std::string wire_fact_names();

}  // namespace qpo::util
