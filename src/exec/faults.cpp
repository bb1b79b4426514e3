#include "exec/faults.h"

#include <array>
#include <cstdio>
#include <sstream>

#include "exec/device_counters.h"
#include "exec/run_tool.h"
#include "exec/steps.h"
#include "report/step_line.h"
#include "util/roce.h"
#include "util/strings.h"

namespace qpo::exec {

namespace {

std::string pct(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%g%%", v);
  return b;
}

// The faults catch RoCEv2 only: a prio qdisc whose fourth band (no priority maps to it) holds
// the netem, and u32 filters sending UDP to port 4791 (IPv4 and IPv6) there. Everything else
// on the netdev, ARP, neighbour discovery and the hosts' control connection among it, passes
// untouched, so a 100% loss makes the RDMA peer unreachable while the agents still talk.
std::vector<std::vector<std::string>> tc_commands(const std::string& netdev, const std::vector<std::string>& netem) {
  std::vector<std::vector<std::string>> cmds;
  cmds.push_back({"qdisc", "replace", "dev", netdev, "root", "handle", "1:", "prio", "bands", "4"});
  std::vector<std::string> child{"qdisc", "replace", "dev", netdev, "parent", "1:4", "handle", "40:", "netem"};
  child.insert(child.end(), netem.begin(), netem.end());
  cmds.push_back(std::move(child));
  cmds.push_back({"filter", "add", "dev", netdev, "parent", "1:", "protocol", "ip", "prio", "1", "u32", "match", "ip",
                  "protocol", "17", "0xff", "match", "ip", "dport", util::kRoceV2UdpPort, "0xffff", "flowid", "1:4"});
  cmds.push_back({"filter", "add", "dev", netdev, "parent", "1:", "protocol", "ipv6", "prio", "2", "u32", "match", "ip6",
                  "protocol", "17", "0xff", "match", "ip6", "dport", util::kRoceV2UdpPort, "0xffff", "flowid", "1:4"});
  return cmds;
}

std::string tc_line(const std::vector<std::string>& args) {
  std::string cmd = "tc";
  for (const auto& x : args) cmd += " " + x;
  return cmd;
}

// "'tc qdisc del dev eth0 root' failed (2): Error: ..."
std::string tc_failed(const std::vector<std::string>& args, int rc, const std::string& out) {
  return "'" + tc_line(args) + "' failed (" + std::to_string(rc) + "): " + std::string(util::trim(out));
}

// Runs tc and returns its output; a failure throws, naming the command and what fault
// injection needs.
std::string tc(const std::vector<std::string>& args) {
  std::string out;
  int rc = run_tool("tc", args, &out);
  if (rc != 0)
    throw std::runtime_error(tc_failed(args, rc, out) +
                             " (fault injection needs root, iproute2 and the sch_prio, sch_netem and cls_u32 modules)");
  return out;
}

// The root qdiscs a kernel attaches by itself (net/sched/sch_generic.c, sch_mq.c; fq_codel is
// the usual net.core.default_qdisc), named in the refusal. What tells them apart is the handle,
// not the kind: the kernel's own have handle 0:, and an mq or fq_codel someone installed (with
// tuned children, say) has a handle of its own and is theirs.
constexpr std::array<const char*, 4> kKernelDefaults{"noqueue", "pfifo_fast", "fq_codel", "mq"};

}  // namespace

RootQdisc parse_root_qdisc(const std::string& out) {
  // "qdisc fq_codel 0: root refcnt 2 limit 10240p ..."
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string qdisc;
    RootQdisc q;
    if (words >> qdisc >> q.kind >> q.handle && qdisc == "qdisc") return q;
  }
  return {};
}

std::string root_qdisc_refusal(const std::string& netdev, const RootQdisc& q) {
  if (q.kind.empty() || q.handle == "0:") return "";
  std::string defaults;
  for (const char* k : kKernelDefaults) defaults += std::string(defaults.empty() ? "" : ", ") + k;
  std::string why = "netdev " + netdev + " has root qdisc " + q.kind + " (handle " + q.handle +
                    "), not a kernel default (" + defaults + ", handle 0:)" +
                    ": qpo would replace it, and removing the fault would leave the kernel default; remove it first "
                    "or run the fault on another device";
  if (q.kind == "prio" && q.handle == "1:")
    why += " (prio 1: is a fault's own qdisc: another fault on this netdev, or one a killed qpo left behind: 'tc qdisc del "
           "dev " + netdev + " root' removes it)";
  return why;
}

namespace {

// The plan step of fault `name` on this host (0 when the plan has none).
int fault_step(const RunState& st, const std::string& name) {
  if (!st.plan) return 0;
  for (const auto& h : st.plan->hosts)
    if (h.host == st.host)
      for (const auto& step : h.steps)
        if (step.kind == plan::StepKind::Fault && step.object == name) return step.index;
  return 0;
}

}  // namespace

Faults::Faults(RunState& st, report::RunReport& log, const std::vector<plan::NetemFault>& faults, const std::string& window, const std::string& phase)
    : st_(st), log_(log), phase_(phase) {
  for (const auto& f : faults) {
    const DeviceState* device = st.devices.find(f.device_id);
    if (f.during != window || !device) continue;
    const DeviceState& d = *device;
    Applied a{f.name, f.device, f.device_id, netdev_of(d), read_hw_counters(d)};
    std::vector<std::string> netem;
    if (f.delay_us) netem.insert(netem.end(), {"delay", std::to_string(f.delay_us) + "us"});
    if (f.loss > 0) netem.insert(netem.end(), {"loss", pct(f.loss)});
    if (f.corrupt > 0) netem.insert(netem.end(), {"corrupt", pct(f.corrupt)});
    if (f.duplicate > 0) netem.insert(netem.end(), {"duplicate", pct(f.duplicate)});
    if (f.reorder > 0) netem.insert(netem.end(), {"reorder", pct(f.reorder)});
    std::string detail = "netem";
    for (const auto& x : netem) detail += " " + x;
    detail += " on udp dport " + std::string(util::kRoceV2UdpPort);
    bool installed = false;  // the root qdisc is ours to delete from the first command on
    // All of a window's faults go on at its first Fault step; each line reports on its own.
    if (int step = fault_step(st, f.name)) log.current_step = step;
    auto& r = run_step(log, st.host, phase, "tc qdisc replace", f.name, "dev " + a.netdev + " " + detail, [&] {
      if (a.netdev.empty()) throw std::runtime_error("no netdev found under " + d.ctx().device_name());
      // Refuse, before touching it, a root qdisc that is the host's own configuration.
      std::string refusal = root_qdisc_refusal(a.netdev, parse_root_qdisc(tc({"qdisc", "show", "dev", a.netdev, "root"})));
      if (!refusal.empty()) throw std::runtime_error(refusal);
      for (const auto& args : tc_commands(a.netdev, netem)) {
        tc(args);
        installed = true;
      }
    });
    if (installed) applied_.push_back(std::move(a));
    if (r.status == report::StepStatus::Failed) {
      ok_ = false;
      return;
    }
  }
}

Faults::~Faults() {
  for (auto& a : applied_) {
    std::vector<std::string> del{"qdisc", "del", "dev", a.netdev, "root"};
    std::string out;
    int rc = run_tool("tc", del, &out);
    // What the faults did, as the device counted it: retransmissions, sequence errors, ...
    const DeviceState* d = st_.devices.find(a.device_id);  // applied on it: it is there
    auto after = d ? read_hw_counters(*d) : a.before;
    auto status = report::StepStatus::Ok;
    std::string message = "hw_counters: " + describe_growth(a.before, after);
    if (rc != 0) {  // the netem may still drop RoCE packets on this netdev: not a quiet success
      std::string why = tc_failed(del, rc, out) + " (fault '" + a.fault + "' may still act on " + a.netdev + ")";
      status = report::StepStatus::Failed;
      message = why + "; " + message;
      log_.fail(why);
    }
    log_.add(
        report::step_line(st_.host, phase_, "tc qdisc del", a.fault, "dev " + a.netdev, status, std::move(message)));
  }
}

}  // namespace qpo::exec
