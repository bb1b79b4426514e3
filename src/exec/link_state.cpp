#include "exec/link_state.h"

#include <algorithm>
#include <stdexcept>

#include "exec/device_counters.h"
#include "exec/run_tool.h"
#include "exec/steps.h"

namespace qpo::exec {

namespace {

void ip_link_set(const std::string& netdev, const std::string& state) {
  std::string out;
  int rc = run_tool("ip", {"link", "set", "dev", netdev, state}, &out);
  if (rc != 0)
    throw std::runtime_error("'ip link set dev " + netdev + " " + state + "' failed (" + std::to_string(rc) + "): " + out +
                             " (a link step needs root and iproute2)");
}

}  // namespace

bool LinkStates::set(const plan::Step& step) {
  const std::string& state = step.args.at(0).value;
  const DeviceState& d = st_.devices.at(step.object);
  std::string netdev = netdev_of(d);
  auto& r = run_step(st_, st_.host, "transitions", step.verb, step.object, "dev " + netdev + " " + state, [&] {
    if (netdev.empty()) throw std::runtime_error("no netdev found under " + d.ctx().device_name());
    ip_link_set(netdev, state);
  });
  if (r.status == report::StepStatus::Failed) return false;
  auto same = [&](const Down& x) { return x.netdev == netdev; };
  if (state == "down") {
    if (std::none_of(down_.begin(), down_.end(), same)) down_.push_back({step.object, netdev});
  } else {
    down_.erase(std::remove_if(down_.begin(), down_.end(), same), down_.end());
  }
  return true;
}

LinkStates::~LinkStates() {
  for (const auto& x : down_) {
    report::StepResult r;
    r.host = st_.host;
    r.phase = "teardown";
    r.verb = "ip link set";
    r.object = x.device;
    r.detail = "dev " + x.netdev + " up";
    try {
      ip_link_set(x.netdev, "up");
      r.message = "the link a step took down is up again";
    } catch (const std::exception& e) {
      r.status = report::StepStatus::Failed;
      r.message = e.what();
      st_.report.fail(e.what());
    }
    st_.report.add(r);
  }
}

}  // namespace qpo::exec
