#include "exec/wire_capture.h"

#include <set>

#include "exec/device_counters.h"
#include "exec/steps.h"
#include "report/step_line.h"
#include "wire/listing.h"

namespace qpo::exec {

std::string capture_path(const std::string& dir, const std::string& scenario, const std::string& host, const std::string& netdev) {
  return (dir.empty() ? std::string(".") : dir) + "/" + scenario + "." + host + "." + netdev + ".pcap";
}

void WireCaptures::start(RunState& st, const plan::Step& step, const std::string& dir) {
  std::set<std::string> netdevs;
  for (const auto& [name, d] : st.devices) netdevs.insert(netdev_of(d));
  for (const auto& netdev : netdevs) {
    std::string path = capture_path(dir, st.report.scenario, st.host, netdev);
    auto& r = run_step(st, st.host, "setup", step.verb, netdev, "", [&] {
      if (netdev.empty()) throw std::runtime_error("a device's GID has no netdev (sysfs gid_attrs/ndevs)");
      live_.push_back(std::make_unique<wire::LiveCapture>(netdev, path));
    });
    r.plan_step = step.index;
    if (r.status != report::StepStatus::Ok) return;
    r.message = "udp dst port 4791 -> " + path;
  }
}

void WireCaptures::stop(RunState& st, int end_step) {
  // Every QP the run knows by address and number, this host's and the others' (the directory).
  std::vector<wire::KnownQp> known;
  for (const auto& [name, q] : st.dir.qps) known.push_back({name, q.gid, q.qpn});
  for (auto& c : live_) {
    wire::CaptureStats s = c->stop();
    std::string why;
    bool named = wire::write_known_qps(c->path(), known, &why);
    auto status = s.error.empty() && named ? report::StepStatus::Ok : report::StepStatus::Failed;
    std::string message = std::to_string(s.packets) + " packets in " + c->path();
    if (s.dropped) message += ", " + std::to_string(s.dropped) + " missed by the kernel (its buffer was full)";
    if (!s.error.empty()) message += "; " + s.error;
    if (!named) message += "; " + why;
    if (status == report::StepStatus::Ok && s.packets == 0) {
      // Not a failure (a run may send nothing), but the usual surprise deserves its reason.
      status = report::StepStatus::Warning;
      message += " (QPs on one Soft-RoCE device exchange packets inside it, never through " + c->netdev() +
                 ": capture QPs on two hosts)";
    }
    auto line = report::step_line(st.host, "teardown", "capture stop", c->netdev(), status, message);
    line.plan_step = end_step;
    st.report.add(std::move(line));
    if (status == report::StepStatus::Failed) st.report.fail("capture on " + c->netdev() + ": " + message);
  }
  live_.clear();
}

WireCaptures::~WireCaptures() {
  for (auto& c : live_) c->stop();  // a run that never reached its CaptureEnd: the files are still closed
}

}  // namespace qpo::exec
