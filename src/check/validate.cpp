#include "check/validate.h"

namespace qpo::check {

Checked validate(const scenario::Scenario& loaded, diag::DiagSink& sink) {
  return validate(scenario::Scenario(loaded), sink);
}

Checked validate(scenario::Scenario&& s, diag::DiagSink& sink) {
  check_cm(s, sink);  // first: fills in connect: from cm: peer, drops a CM QP's states:
  check_references(s, sink);
  check_transitions(s, sink);
  check_timeline(s, sink);
  check_values(s, sink);
  check_cross_qp(s, sink);
  check_externals(s, sink);
  size_unwritten_cqs(s);
  check_caps(s, sink);
  check_scripts(s, sink);
  check_memory_windows(s, sink);
  check_multicast(s, sink);
  check_workers(s, sink);
  check_faults(s, sink);
  check_packet_events(s, sink);
  return Checked(std::move(s));
}

}  // namespace qpo::check
