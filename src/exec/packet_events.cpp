#include "exec/packet_events.h"

#include <map>
#include <tuple>

#include "exec/device_counters.h"
#include "exec/faults.h"
#include "exec/run_tool.h"
#include "exec/steps.h"
#include "report/step_line.h"
#include "util/strings.h"

namespace qpo::exec {

namespace {

std::string tc_text(const std::vector<std::string>& args) {
  std::string out = "tc";
  for (const auto& a : args) out += " " + a;
  return out;
}

// Runs tc; throws with its output when it fails.
void tc_or_throw(const std::vector<std::string>& args) {
  std::string out;
  if (int rc = run_tool("tc", args, &out); rc != 0)
    throw std::runtime_error(tc_text(args) + " failed (exit " + std::to_string(rc) + "): " + out);
}

// The prio qdisc a delay goes through: every priority to band 1, band 3 a netem that only
// the program's class reaches (everything else on the netdev passes undelayed).
void make_delay_qdisc(const std::string& netdev, uint64_t delay_us) {
  std::string current;
  run_tool("tc", {"qdisc", "show", "dev", netdev, "root"}, &current);
  std::string refusal = root_qdisc_refusal(netdev, parse_root_qdisc(current));
  if (!refusal.empty()) throw std::runtime_error(refusal);
  std::string handle = util::hex(wire::kDelayPrioHandle).substr(2) + ":";
  std::vector<std::string> prio{"qdisc", "replace", "dev", netdev, "root", "handle", handle, "prio", "bands", "3", "priomap"};
  for (int i = 0; i < 16; ++i) prio.push_back("0");
  tc_or_throw(prio);
  tc_or_throw({"qdisc", "replace", "dev", netdev, "parent", handle + "3", "handle", "5153:", "netem", "delay",
               std::to_string(delay_us) + "us"});
}

}  // namespace

HostPacketEvents::EgressQdisc::~EgressQdisc() { remove(); }

std::string HostPacketEvents::EgressQdisc::remove() {
  if (removed) return "";
  removed = true;
  std::string out;
  std::vector<std::string> del{"qdisc", "del", "dev", netdev, "root"};
  if (int rc = run_tool("tc", del, &out); rc != 0) return tc_text(del) + " failed (exit " + std::to_string(rc) + "): " + out;
  return "";
}

HostPacketEvents::~HostPacketEvents() {
  programs_.clear();  // detach before the qdisc they filter goes
  qdiscs_.clear();
}

void HostPacketEvents::arm(RunState& st, report::RunReport& log, const plan::Plan& plan, const plan::Step& step) {
  // Rules by (netdev, hook), in the plan's order of events.
  using Where = std::pair<std::string, bool>;  // netdev, at the sender's egress
  std::map<Where, std::vector<wire::EventRule>> rules;
  std::map<Where, uint64_t> delay;
  std::vector<std::pair<Where, Armed>> pending;
  for (const auto& e : plan.packet_events) {
    if (e.host != st.host) continue;
    auto receiver = st.dir.qps.find(e.receiver_id);
    const DeviceState* d = st.devices.find(e.device_id);
    if (receiver == st.dir.qps.end() || !d) {
      log.fail("packet event '" + e.name + "': " + e.receiver + " or device " + e.device + " is not up");
      return;
    }
    Where where{netdev_of(*d), e.at_sender};
    wire::EventRule r;
    r.dest_qpn = receiver->second.qpn;
    r.match = e.by_psn ? wire::EventMatch::Psn : wire::EventMatch::Nth;
    r.value = e.value;
    r.transmission = e.transmission;
    r.action = e.action;
    r.packets = e.packets;
    auto& list = rules[where];
    pending.push_back({where, Armed{&e, 0, list.size(), r.dest_qpn}});
    list.push_back(r);
    if (e.at_sender) delay[where] = e.delay_us;
  }
  std::map<Where, size_t> program_of;
  for (auto& [where, list] : rules) {
    const auto& [netdev, at_sender] = where;
    std::string detail = at_sender ? "egress, netem delay " + std::to_string(delay[where]) + " us" : "ingress";
    auto& line = run_step(log, st.host, "traffic", step.verb, netdev, detail, [&, &list = list, &where = where] {
      if (where.first.empty()) throw std::runtime_error("a device's GID has no netdev (sysfs gid_attrs/ndevs)");
      if (where.second) {
        qdiscs_.push_back(std::make_unique<EgressQdisc>());
        qdiscs_.back()->netdev = where.first;
        make_delay_qdisc(where.first, delay[where]);
      }
      programs_.push_back(std::make_unique<wire::PacketEvents>(
          where.first, list, where.second ? wire::EventHook::EgressPrio : wire::EventHook::Ingress));
    });
    line.plan_step = step.index;
    if (line.status == report::StepStatus::Failed) return;
    line.message = std::to_string(list.size()) + " rule" + (list.size() == 1 ? "" : "s") + " on " + netdev +
                   (at_sender ? "'s egress" : "'s ingress");
    program_of[where] = programs_.size() - 1;
  }
  for (auto& [where, a] : pending) {
    a.program = program_of.at(where);
    auto line = report::step_line(st.host, "traffic", "packet event", a.event->name, report::StepStatus::Ok,
                                  plan::describe(*a.event) + " (QP " + util::hex(a.dest_qpn) + ")");
    line.plan_step = step.index;
    log.add(std::move(line));
    armed_.push_back(a);
  }
}

void HostPacketEvents::disarm(RunState& st, report::RunReport& log, int end_step) {
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
    log.add(std::move(line));
  }
  auto off = [&](const char* verb, const std::string& netdev, const std::string& why) {
    auto line = report::step_line(st.host, "teardown", verb, netdev,
                                  why.empty() ? report::StepStatus::Ok : report::StepStatus::Failed, why);
    line.plan_step = end_step;
    log.add(std::move(line));
    if (!why.empty()) log.fail(why);
  };
  for (auto& p : programs_) off("tc bpf off", p->netdev(), p->remove());
  for (auto& q : qdiscs_) off("tc qdisc del", q->netdev, q->remove());
  programs_.clear();
  qdiscs_.clear();
  armed_.clear();
}

}  // namespace qpo::exec
