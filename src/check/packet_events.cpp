// Packet events against the QPs they name (Q570-Q572). An event acts on the packets a QP
// sends where they arrive: its connected peer's netdev, through qpo's tc BPF program there
// (src/wire). So the QP needs a peer (RC or UC with connect:), the peer must be on another
// device (rxe carries packets between QPs of one device inside it, hardware inside the NIC:
// no netdev sees them), and the program holds 16 rules per receiving host.
#include <map>

#include "check/validate.h"

namespace qpo::check {

void check_packet_events(const scenario::Scenario& s, diag::DiagSink& sink) {
  std::map<std::string, int> per_host;
  for (const auto& e : s.packet_events) {
    std::string path = "wire.events." + e.name;
    const scenario::Qp* q = s.qp(e.qp.name);
    if (!q) continue;  // Q201 said so
    if (e.nth && e.transmission != 1) {
      auto& d = sink.error("Q570", e.loc, path + ".transmission", "transmission: applies to a 'psn:' event, not to 'nth:'");
      d.hint = "nth: N acts on the Nth packet counted, whichever transmission it is";
    }
    if ((q->qp_type != spec::QpType::RC && q->qp_type != spec::QpType::UC) || !q->connect) {
      auto& d = sink.error("Q570", e.qp.loc, path + ".qp",
                           "packet event '" + e.name + "' acts on " + e.qp.name +
                               "'s packets where they arrive, at its connected peer: " + e.qp.name +
                               " must be an RC or UC QP with connect:");
      d.rule = "the event is armed on the receiving QP's host, matching its QP number";
      continue;
    }
    const scenario::Qp* peer = s.qp(q->connect.name);
    if (!peer) continue;
    const scenario::Pd* pa = s.pd(q->pd.name);
    const scenario::Pd* pb = s.pd(peer->pd.name);
    if (pa && pb && pa->device.name == pb->device.name) {
      auto& d = sink.error("Q571", e.qp.loc, path + ".qp",
                           e.qp.name + " and its peer " + peer->name + " are on one device ('" + pa->device.name +
                               "'): their packets never reach a netdev, where packet events act");
      d.rule = "Soft-RoCE carries packets between QPs of one device inside it (RXE_LOOPBACK_MASK), hardware inside the NIC";
      d.hint = "put the two QPs on devices of two hosts (qpo run --lab gives each host a guest)";
      continue;
    }
    std::string host = s.host_of_qp(*peer);
    if (++per_host[host] == 17) {
      auto& d = sink.error("Q572", e.loc, path, "more than 16 packet events arrive at host " + host);
      d.rule = "qpo's BPF program holds 16 rules per netdev (QPO_MAX_RULES)";
    }
  }
}

}  // namespace qpo::check
