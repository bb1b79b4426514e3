#pragma once
// The HTML report's "On the wire" section: per QP a `wire:` entry named, a sequence diagram
// of its packets with its peer as its host's capture saw them (requests to the right,
// responses back; retransmissions, NAKs and ECN marks coloured), with the packet events on it.
#include <string>

#include "report/run_report.h"

namespace qpo::report::html {

// "" when the run recorded no sequence.
std::string wire_section(const RunReport& r);
// One diagram (inline SVG): each packet a row, carrying data-psn and data-dir attributes so
// a test can compare the page with the run's JSON.
std::string svg_sequence(const WireSequence& q);

}  // namespace qpo::report::html
