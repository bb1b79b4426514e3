#include "exec/faults.h"

#include <cstdio>

#include "exec/device_counters.h"
#include "exec/run_tool.h"
#include "exec/steps.h"

namespace qpo::exec {

namespace {

std::string pct(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%g%%", v);
  return b;
}

// RoCEv2's UDP destination port: verbs traffic and the CM's MADs (QP1) both use it.
constexpr const char* kRoceV2Port = "4791";

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
                  "protocol", "17", "0xff", "match", "ip", "dport", kRoceV2Port, "0xffff", "flowid", "1:4"});
  cmds.push_back({"filter", "add", "dev", netdev, "parent", "1:", "protocol", "ipv6", "prio", "2", "u32", "match", "ip6",
                  "protocol", "17", "0xff", "match", "ip6", "dport", kRoceV2Port, "0xffff", "flowid", "1:4"});
  return cmds;
}

}  // namespace

Faults::Faults(RunState& st, const std::string& window, const std::string& phase) : st_(st), phase_(phase) {
  for (const auto& f : st.scenario->faults) {
    auto it = st.devices.find(f.device.name);
    if (f.during != window || it == st.devices.end()) continue;
    const DeviceState& d = it->second;
    Applied a{f.name, f.device.name, netdev_of(d), read_hw_counters(d)};
    std::vector<std::string> netem;
    if (f.delay_us) netem.insert(netem.end(), {"delay", std::to_string(f.delay_us) + "us"});
    if (f.loss > 0) netem.insert(netem.end(), {"loss", pct(f.loss)});
    if (f.corrupt > 0) netem.insert(netem.end(), {"corrupt", pct(f.corrupt)});
    if (f.duplicate > 0) netem.insert(netem.end(), {"duplicate", pct(f.duplicate)});
    if (f.reorder > 0) netem.insert(netem.end(), {"reorder", pct(f.reorder)});
    std::string detail = "netem";
    for (const auto& x : netem) detail += " " + x;
    detail += " on udp dport " + std::string(kRoceV2Port);
    bool installed = false;  // the root qdisc is ours to delete from the first command on
    auto& r = run_step(st, st.host, phase, "tc qdisc replace", f.name, "dev " + a.netdev + " " + detail, [&] {
      if (a.netdev.empty()) throw std::runtime_error("no netdev found under " + d.ctx().device_name());
      for (const auto& args : tc_commands(a.netdev, netem)) {
        std::string out;
        int rc = run_tool("tc", args, &out);
        if (rc != 0) {
          std::string cmd = "tc";
          for (const auto& x : args) cmd += " " + x;
          throw std::runtime_error("'" + cmd + "' failed (" + std::to_string(rc) + "): " + out +
                                   " (fault injection needs root, iproute2 and the sch_prio, sch_netem and cls_u32 modules)");
        }
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
    std::string out;
    run_tool("tc", {"qdisc", "del", "dev", a.netdev, "root"}, &out);
    // What the faults did, as the device counted it: retransmissions, sequence errors, ...
    auto after = read_hw_counters(st_.devices.at(a.device));
    report::StepResult r;
    r.host = st_.host;
    r.phase = phase_;
    r.verb = "tc qdisc del";
    r.object = a.fault;
    r.detail = "dev " + a.netdev;
    r.message = "hw_counters: " + describe_growth(a.before, after);
    st_.report.add(r);
  }
}

}  // namespace qpo::exec
