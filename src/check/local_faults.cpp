// `qpo run --local`: every host of the scenario runs on this machine, so two hosts' devices
// that name the same device (or `auto`) are one device here. rxe delivers traffic between
// QPs of one device inside the kernel, so a fault on its netdev cannot touch a workload
// between those hosts: the run would pass without the fault ever mattering (Q511, an error).
#include "check/validate.h"

namespace qpo::check {

namespace {

// Whether two scenario devices open the same device when both are on this machine.
bool same_here(const scenario::Device& a, const scenario::Device& b) {
  return a.dev_name == "auto" || b.dev_name == "auto" || a.dev_name == b.dev_name;
}

}  // namespace

void check_local_faults(const scenario::Scenario& s, diag::DiagSink& sink) {
  for (const auto& f : s.faults) {
    for (const auto& w : s.workloads) {
      const auto* q = s.qp(w.qp.name);
      const auto* p = q ? s.qp(q->connect.name) : nullptr;
      if (!q || !p) continue;
      const auto* dq = s.device_of_qp(*q);
      const auto* dp = s.device_of_qp(*p);
      if (!dq || !dp || dq->host.name == dp->host.name || !same_here(*dq, *dp)) continue;
      if (dq->name != f.device.name && dp->name != f.device.name) continue;
      auto& d = sink.error("Q511", f.device.loc, "faults." + f.name + ".device",
                           "with --local hosts " + dq->host.name + " and " + dp->host.name +
                               " share one device on this machine, which short-cuts workload '" + w.name +
                               "' between them, so fault '" + f.name + "' cannot touch it");
      d.rule = "rxe loops back packets between its own QPs (RXE_LOOPBACK_MASK) without the netdev";
      d.hint = "run without --local: in the Soft-RoCE lab (no RDMA device here) each host gets its own guest; "
               "across machines each host's address reaches it";
      d.related.push_back({dq->loc, "device '" + dq->name + "' (host " + dq->host.name + ", " + dq->dev_name + ")"});
      d.related.push_back({dp->loc, "device '" + dp->name + "' (host " + dp->host.name + ", " + dp->dev_name + ")"});
      break;  // one error per fault
    }
  }
  check_faults(s, sink, /*local=*/true);
}

}  // namespace qpo::check
