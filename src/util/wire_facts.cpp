#include "util/wire_facts.h"

namespace qpo::util {

namespace {

using K = WireFactKind;
constexpr WireFactInfo kFacts[] = {
    {WireFact::Requests, "requests", K::Count, "request packets the QP sent, retransmissions included"},
    {WireFact::Retransmissions, "retransmissions", K::Count, "request packets whose PSN the QP had sent before"},
    {WireFact::MaxTransmissions, "max_transmissions", K::Count, "the most times one PSN went out (1: nothing resent)"},
    {WireFact::Acks, "acks", K::Count, "ACKs the QP received"},
    {WireFact::Naks, "naks", K::Count, "NAKs (PSN sequence error) the QP received"},
    {WireFact::RnrNaks, "rnr_naks", K::Count, "RNR NAKs the QP received"},
    {WireFact::OtherNaks, "other_naks", K::Count, "NAKs with another code (invalid request, remote access or operational error)"},
    {WireFact::PacketsPerMessage, "packets_per_message", K::Count, "request packets of the QP's largest message"},
    {WireFact::EcnMarked, "ecn_marked", K::Count, "responses that reached the QP marked ECN CE"},
    {WireFact::Cnps, "cnps", K::Count, "congestion notification packets the QP received"},
    {WireFact::MaxReadsInFlight, "max_reads_in_flight", K::Count,
     "RDMA READ requests outstanding at once (sent, their last response not back): at most max_rd_atomic"},
    {WireFact::GoBackN, "go_back_n", K::Flag,
     "after a NAK the next request is the NAK's PSN, after a timeout the oldest unacknowledged one, and no PSN is skipped"},
    {WireFact::RetransmitTimeout, "retransmit_timeout", K::Factor,
     "the median gap before a retransmission no NAK asked for is within this factor of 4.096 us x 2^timeout"},
    {WireFact::RnrDelay, "rnr_delay", K::Factor, "the median gap from an RNR NAK to the next request is within this factor of the NAK's timer"},
};

}  // namespace

const WireFactInfo& wire_fact_info(WireFact f) {
  for (const auto& i : kFacts)
    if (i.fact == f) return i;
  return kFacts[0];
}

std::optional<WireFact> parse_wire_fact(std::string_view name) {
  for (const auto& i : kFacts)
    if (name == i.name) return i.fact;
  return std::nullopt;
}

std::string wire_fact_names() {
  std::string out;
  for (const auto& i : kFacts) out += (out.empty() ? "" : ", ") + std::string(i.name);
  return out;
}

}  // namespace qpo::util
