#include "exec/link_state.h"

#include <algorithm>
#include <fstream>
#include <stdexcept>

#include "exec/device_counters.h"
#include "exec/run_tool.h"
#include "exec/steps.h"
#include "report/step_line.h"

namespace qpo::exec {

namespace {

void ip_link_set(const std::string& netdev, const std::string& state) {
  std::string out;
  int rc = run_tool("ip", {"link", "set", "dev", netdev, state}, &out);
  if (rc != 0)
    throw std::runtime_error("'ip link set dev " + netdev + " " + state + "' failed (" + std::to_string(rc) + "): " + out +
                             " (a link step needs root and iproute2)");
}

// IFF_UP in /sys/class/net/NETDEV/flags: administratively up.
bool is_up(const std::string& netdev) {
  std::ifstream in("/sys/class/net/" + netdev + "/flags");
  unsigned long flags = 0;
  in >> std::hex >> flags;
  return flags & 0x1;
}

}  // namespace

bool LinkStates::set(const plan::Step& step) {
  bool up = step.extra().link_up;
  const char* state = up ? "up" : "down";
  auto taken = std::find_if(down_.begin(), down_.end(), [&](const Down& x) { return x.device == step.object; });
  const DeviceState& d = st_.devices.at(step.id);
  // Up again: the netdev this run took down (the GID that named it may be gone with the link).
  std::string netdev = taken != down_.end() ? taken->netdev : netdev_of(d);
  bool was_up = !netdev.empty() && is_up(netdev);
  auto& r = run_step(log_, st_.host, "transitions", step.verb, step.object, "dev " + netdev + " " + state, [&] {
    if (netdev.empty()) throw std::runtime_error("no netdev found under " + d.ctx().device_name());
    ip_link_set(netdev, state);
  });
  if (r.status == report::StepStatus::Failed) return false;
  if (!up && was_up && taken == down_.end()) down_.push_back({step.object, netdev});
  if (up && taken != down_.end()) down_.erase(taken);
  return true;
}

LinkStates::~LinkStates() {
  for (const auto& x : down_) {
    auto status = report::StepStatus::Ok;
    std::string message = "the link a step took down is up again";
    try {
      ip_link_set(x.netdev, "up");
    } catch (const std::exception& e) {
      status = report::StepStatus::Failed;
      message = e.what();
      log_.fail(e.what());
    }
    log_.add(report::step_line(st_.host, "teardown", "ip link set", x.device, "dev " + x.netdev + " up", status,
                                     std::move(message)));
  }
}

}  // namespace qpo::exec
