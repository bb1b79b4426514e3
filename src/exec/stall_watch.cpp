#include "exec/stall_watch.h"

#include <cstdio>

#include "spec/rules.h"
#include "verbs/qp_control.h"

namespace qpo::exec {

namespace {

// Long enough that a loop waiting on a slow peer does not keep reading sysfs, short enough
// that the snapshot covers nearly all of a stall.
constexpr auto kQuietBeforeSnapshot = std::chrono::milliseconds(500);

}  // namespace

StallWatch::DeviceCounters StallWatch::read(const DeviceState& d) const {
  std::string netdev = netdev_of(d);
  return {read_hw_counters(d), read_netdev_statistics(netdev), netdev};
}

void StallWatch::observe(bool progress, Clock::time_point now) {
  if (progress) {
    quiet_since_ = now;
    taken_at_.reset();
    return;
  }
  if (taken_at_ || now - quiet_since_ < kQuietBeforeSnapshot) return;
  before_.clear();
  st_.devices.for_each([&](plan::ObjectId, const DeviceState& d) {
    if (d.res) before_[&d] = read(d);
  });
  taken_at_ = now;
}

std::string StallWatch::describe(const QpState& q) const {
  std::string out = "QP '" + q.facts->name + "'";
  ibv_qp_state state{};
  if (q.qp && verbs::query_state(q.qp->get(), &state) == 0)
    out += " is in " + std::string(spec::state_name(static_cast<spec::QpState>(state)));
  if (!taken_at_ || !q.device || !q.device->facts) return out;
  auto it = before_.find(q.device);
  if (it == before_.end()) return out;
  const DeviceState& d = *q.device;
  DeviceCounters now = read(d);
  char secs[32];
  std::snprintf(secs, sizeof secs, "%.1f", std::chrono::duration<double>(Clock::now() - *taken_at_).count());
  out += "; during the last " + std::string(secs) + " s " + d.ctx().device_name() + " port " +
         std::to_string(d.ctx().port()) + " hw_counters: " + describe_growth(it->second.hw, now.hw);
  if (!now.netdev.empty()) out += "; " + now.netdev + ": " + describe_growth(it->second.net, now.net);
  return out;
}

}  // namespace qpo::exec
