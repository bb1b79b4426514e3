#include "exec/packet_events.h"

#include <map>

#include "exec/device_counters.h"
#include "exec/steps.h"
#include "report/step_line.h"
#include "util/strings.h"

namespace qpo::exec {

void HostPacketEvents::arm(RunState& st, const plan::Plan& plan, const plan::Step& step) {
  // Rules by netdev, in the plan's order of events.
  std::map<std::string, std::vector<wire::EventRule>> rules;
  std::vector<std::pair<std::string, Armed>> pending;
  for (const auto& e : plan.packet_events) {
    if (e.host != st.host) continue;
    auto q = st.qps.find(e.receiver);
    auto d = st.devices.find(e.receiver_device);
    if (q == st.qps.end() || !q->second.qp || d == st.devices.end()) {
      st.report.fail("packet event '" + e.name + "': " + e.receiver + " was not made on this host");
      return;
    }
    std::string netdev = netdev_of(d->second);
    wire::EventRule r;
    r.dest_qpn = q->second.qp->get()->qp_num;
    r.match = e.by_psn ? wire::EventMatch::Psn : wire::EventMatch::Nth;
    r.value = e.value;
    r.transmission = e.transmission;
    r.action = e.action;
    r.packets = e.packets;
    auto& list = rules[netdev];
    pending.push_back({netdev, Armed{&e, 0, list.size(), r.dest_qpn}});
    list.push_back(r);
  }
  std::map<std::string, size_t> program_of;
  for (auto& [netdev, list] : rules) {
    auto& line = run_step(st, st.host, "traffic", step.verb, netdev, "", [&, &list = list, &netdev = netdev] {
      if (netdev.empty()) throw std::runtime_error("a receiving device's GID has no netdev (sysfs gid_attrs/ndevs)");
      programs_.push_back(std::make_unique<wire::PacketEvents>(netdev, list));
    });
    line.plan_step = step.index;
    if (line.status == report::StepStatus::Failed) return;
    line.message = std::to_string(list.size()) + " rule" + (list.size() == 1 ? "" : "s") + " on " + netdev + "'s ingress";
    program_of[netdev] = programs_.size() - 1;
  }
  for (auto& [netdev, a] : pending) {
    a.program = program_of.at(netdev);
    auto line = report::step_line(st.host, "traffic", "packet event", a.event->name, report::StepStatus::Ok,
                                  plan::describe(*a.event) + " (QP " + util::hex(a.dest_qpn) + ")");
    line.plan_step = step.index;
    st.report.add(std::move(line));
    armed_.push_back(a);
  }
}

void HostPacketEvents::disarm(RunState& st, int end_step) {
  for (const auto& a : armed_) {
    auto& program = *programs_[a.program];
    uint32_t n = program.hits_per_rule().at(a.rule);
    std::string which;
    for (const auto& h : program.hits())
      if (h.rule == a.rule) which += (which.empty() ? ": " : ", ") + std::string("psn ") + util::hex(h.psn) +
                                     (h.transmission > 1 ? " (transmission " + std::to_string(h.transmission) + ")" : "");
    auto status = n ? report::StepStatus::Ok : report::StepStatus::Warning;
    std::string message = "acted on " + std::to_string(n) + " packet" + (n == 1 ? "" : "s") + which;
    if (!n) message += " (no packet matched: did the workload send that many?)";
    auto line = report::step_line(st.host, "teardown", "packet event", a.event->name, status, message);
    line.plan_step = end_step;
    st.report.add(std::move(line));
  }
  for (auto& p : programs_) {
    std::string why = p->remove();
    auto line = report::step_line(st.host, "teardown", "tc ingress bpf off", p->netdev(),
                                  why.empty() ? report::StepStatus::Ok : report::StepStatus::Failed, why);
    line.plan_step = end_step;
    st.report.add(std::move(line));
    if (!why.empty()) st.report.fail(why);
  }
  programs_.clear();
  armed_.clear();
}

}  // namespace qpo::exec
