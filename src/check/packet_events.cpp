// Packet events against the QPs they name (Q570-Q572). An event acts on the packets a QP
// sends where they arrive: its connected peer's netdev, through qpo's tc BPF program there
// (src/wire). So the QP needs a peer (RC or UC with connect:), the peer must be on another
// device (rxe carries packets between QPs of one device inside it, hardware inside the NIC:
// no netdev sees them), and the program holds 32 rules per receiving host. Wire expectations read a QP with its peer: the same rules.
#include <map>
#include <vector>

#include "check/validate.h"

namespace qpo::check {

// QPO_MAX_RULES of src/wire/bpf/packet_events.h (check sits below wire: the number is repeated
// here; tests/scenarios/bad/q572-too-many-events.yaml holds 33 to it, the lab runs 20).
constexpr int kMaxEventsPerHost = 32;

namespace {

// The QPs `ref` names (a QP or a counted group's members), or a Q201 and none.
std::vector<const scenario::Qp*> named_qps(const scenario::Scenario& s, const scenario::Ref& ref, const std::string& path,
                                           diag::DiagSink& sink) {
  std::vector<const scenario::Qp*> out;
  if (!ref) return out;
  for (const auto& name : s.qp_or_members(ref.name))
    if (const auto* q = s.qp(name)) out.push_back(q);
  if (out.empty()) {
    auto& d = sink.error("Q201", ref.loc, path, "'" + ref.name + "' is not defined in qps (nor a counted QP group)");
    d.rule = "references must name an object of the right kind";
  }
  return out;
}

// Q570/Q571 for one QP a wire entry names; false when it cannot be used.
bool check_requester(const scenario::Scenario& s, const scenario::Qp& q, const scenario::Ref& ref, const std::string& what,
                     const std::string& path, diag::DiagSink& sink) {
  if ((q.qp_type != spec::QpType::RC && q.qp_type != spec::QpType::UC) || !q.connect) {
    auto& d = sink.error("Q570", ref.loc, path, what + " needs " + q.name + "'s connected peer (packets go between the two): " +
                                                    q.name + " must be an RC or UC QP with connect:");
    d.rule = "packet events are armed on the receiving QP's host, matching its QP number; the capture pairs a QP with its peer";
    return false;
  }
  const scenario::Qp* peer = s.qp(q.connect.name);
  if (!peer) return false;
  const scenario::Pd* pa = s.pd(q.pd.name);
  const scenario::Pd* pb = s.pd(peer->pd.name);
  if (pa && pb && pa->device.name == pb->device.name) {
    auto& d = sink.error("Q571", ref.loc, path,
                         q.name + " and its peer " + peer->name + " are on one device ('" + pa->device.name +
                             "'): their packets never reach a netdev, where packets are captured and events act");
    d.rule = "Soft-RoCE carries packets between QPs of one device inside it (RXE_LOOPBACK_MASK), hardware inside the NIC";
    d.hint = "put the two QPs on devices of two hosts (qpo run --lab gives each host a guest)";
    return false;
  }
  return true;
}

}  // namespace

void check_packet_events(const scenario::Scenario& s, diag::DiagSink& sink) {
  for (const auto& e : s.wire_expects)
    for (const auto* q : named_qps(s, e.qp, e.path + ".qp", sink))
      if (!check_requester(s, *q, e.qp, "a wire expectation", e.path + ".qp", sink)) break;
  if (!s.packet_events.empty() && s.workloads.empty()) {
    const auto& e = s.packet_events.front();
    auto& d = sink.warning("Q573", e.loc, "wire.events." + e.name,
                           "packet events are armed before the first workload, and this scenario has none: they never act");
    d.hint = "add the workload whose packets they should act on";
  }
  // A delay takes its sending netdev's root qdisc (prio + one netem band), as a fault does.
  std::map<std::string, const scenario::PacketEvent*> delay_on;  // sending device -> its first delay
  for (const auto& e : s.packet_events) {
    if (e.action != util::EventAction::Delay) continue;
    for (const auto& name : s.qp_or_members(e.qp.name)) {
      const auto* q = s.qp(name);
      const auto* pd = q ? s.pd(q->pd.name) : nullptr;
      if (!pd) continue;
      auto [it, fresh] = delay_on.emplace(pd->device.name, &e);
      if (!fresh && it->second->delay_us != e.delay_us) {
        auto& d = sink.error("Q574", e.loc, "wire.events." + e.name + ".delay",
                             "delays on device '" + pd->device.name + "' differ ('" + it->second->name + "' and '" + e.name +
                                 "'): one netem band per sending netdev holds one delay");
        d.related.push_back({it->second->loc, "'" + it->second->name + "' here"});
        break;
      }
      for (const auto& f : s.faults)
        if (f.device.name == pd->device.name && fresh) {
          auto& d = sink.error("Q574", e.loc, "wire.events." + e.name,
                               "delay event '" + e.name + "' and fault '" + f.name + "' both need device '" + pd->device.name +
                                   "''s root qdisc");
          d.rule = "a delay puts a prio qdisc with a netem band at the sending netdev's root, as a fault does";
          d.hint = "drop the fault, or delay packets of a QP on another device";
        }
    }
  }
  std::map<std::string, int> per_host;
  for (const auto& e : s.packet_events) {
    std::string path = "wire.events." + e.name;
    if (e.nth && e.transmission != 1) {
      auto& d = sink.error("Q570", e.loc, path + ".transmission", "transmission: applies to a 'psn:' event, not to 'nth:'");
      d.hint = "nth: N acts on the Nth packet counted, whichever transmission it is";
    }
    for (const auto* q : named_qps(s, e.qp, path + ".qp", sink)) {
      if (!check_requester(s, *q, e.qp, "packet event '" + e.name + "'", path + ".qp", sink)) break;
      std::string host = s.host_of_qp(*s.qp(q->connect.name));
      if (++per_host[host] == kMaxEventsPerHost + 1) {
        auto& d = sink.error("Q572", e.loc, path, "more than " + std::to_string(kMaxEventsPerHost) + " packet events arrive at host " + host);
        d.rule = "qpo's BPF program holds " + std::to_string(kMaxEventsPerHost) + " rules per netdev (QPO_MAX_RULES)";
      }
    }
  }
}

}  // namespace qpo::check
