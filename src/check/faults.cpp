// Faults against each other (Q625). A fault owns its netdev's root qdisc: a prio with one
// netem band and u32 filters for RoCEv2 (exec/faults.cpp). A second fault on the same netdev
// would replace the first's netem and add the filters again, and removing either fault
// (`qdisc del root`) removes both: a `during: traffic` fault's removal would end a
// `during: all` one early. `all` spans the traffic window, so any two faults on one netdev
// overlap, whatever their windows: one netem per netdev, and the scenario says so up front.
#include "check/validate.h"
#include "util/roce.h"

namespace qpo::check {

namespace {

using scenario::Device;
using scenario::Fault;

// Whether two devices of the scenario open the same netdev: the same device, or the same
// device name and port on the same host (`auto` twice on one host is the same first device).
bool same_netdev(const Device& a, const Device& b) {
  return &a == &b || (a.host.name == b.host.name && a.dev_name == b.dev_name && a.port == b.port);
}

// `qpo run --local` puts every host on this machine: devices of two hosts with the same name
// (or `auto`) and port are one device, so one netdev (check/local_faults.cpp, Q511, likewise).
bool same_netdev_local(const Device& a, const Device& b) {
  return a.host.name != b.host.name && (a.dev_name == "auto" || b.dev_name == "auto" || a.dev_name == b.dev_name) &&
         a.port == b.port;
}

// "device 'da' (rxe0 on host a)": its device name unless auto, its host when there are several.
std::string where(const scenario::Scenario& s, const Device& d) {
  bool host = d.host && s.hosts.size() > 1;
  std::string w = "device '" + d.name + "'";
  if (d.dev_name != "auto") w += " (" + d.dev_name + (host ? " on host " + d.host.name : "") + ")";
  else if (host) w += " (host " + d.host.name + ")";
  return w;
}

void report_overlap(const scenario::Scenario& s, const Fault& first, const Fault& second, bool local,
                    diag::DiagSink& sink) {
  const Device* d1 = s.device(first.device.name);
  const Device* d2 = s.device(second.device.name);
  std::string on = d1 == d2 ? where(s, *d2)
                   : where(s, *d1) + " and " + where(s, *d2) + (local ? ", one netdev with --local," : ", one netdev,");
  std::string msg =
      first.during == second.during
          ? "faults '" + first.name + "' and '" + second.name + "' both act on " + on +
                (second.during == "all" ? " during the whole run" : " during traffic") +
                ": one netem per device; merge them into one fault"
          : "fault '" + second.name + "' (during: " + second.during + ") and fault '" + first.name +
                "' (during: " + first.during + ") both act on " + on +
                " during traffic: one netem per device, and removing the traffic fault after the workloads would "
                "remove the other too; merge them into one fault";
  auto& d = sink.error("Q625", second.device.loc, "faults." + second.name + ".device", msg);
  d.rule = "a fault replaces its netdev's root qdisc (prio, one netem band, u32 filters for udp dport " +
           std::string(util::kRoceV2UdpPort) +
           "): a second one replaces the first's netem, and removing either (tc qdisc del root) removes both";
  d.hint = "one fault per device, with every netem setting it needs (loss, delay, corrupt, duplicate, reorder); "
           "for different windows, keep the one that matters";
  d.related.push_back({first.device.loc, "fault '" + first.name + "' on " + where(s, *d1) + " here"});
}

}  // namespace

void check_faults(const scenario::Scenario& s, diag::DiagSink& sink, bool local) {
  for (size_t j = 0; j < s.faults.size(); ++j) {
    const Device* dj = s.device(s.faults[j].device.name);
    if (!dj) continue;  // a dangling device is Q201's
    for (size_t i = 0; i < j; ++i) {
      const Device* di = s.device(s.faults[i].device.name);
      if (!di || !(local ? same_netdev_local(*di, *dj) : same_netdev(*di, *dj))) continue;
      report_overlap(s, s.faults[i], s.faults[j], local, sink);
      break;  // one error per fault
    }
  }
}

}  // namespace qpo::check
