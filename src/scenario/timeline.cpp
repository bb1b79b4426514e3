#include "scenario/timeline.h"

#include <algorithm>

namespace qpo::scenario {

const char* timeline_kind_name(TimelineStep::Kind k) {
  switch (k) {
    case TimelineStep::Kind::Smoke: return "smoke";
    case TimelineStep::Kind::Workloads: return "workload";
    case TimelineStep::Kind::Transition: return "transition";
    case TimelineStep::Kind::Barrier: return "barrier";
    case TimelineStep::Kind::Pause: return "pause";
    case TimelineStep::Kind::Event: return "event";
    case TimelineStep::Kind::SrqLimit: return "srq_limit";
    case TimelineStep::Kind::BindMw: return "bind";
    case TimelineStep::Kind::InvalidateMw: return "invalidate";
  }
  return "?";
}

std::vector<int> workload_waves(const Scenario& s) {
  std::vector<int> wave(s.workloads.size(), 0);
  auto ends = [&](const Workload& w) {
    const auto* q = s.qp(w.qp.name);
    return std::pair<std::string, std::string>{w.qp.name, q ? q->connect.name : ""};
  };
  for (size_t i = 0; i < s.workloads.size(); ++i) {
    auto [a, b] = ends(s.workloads[i]);
    for (size_t j = 0; j < i; ++j) {
      auto [c, d] = ends(s.workloads[j]);
      bool shared = a == c || a == d || (!b.empty() && (b == c || b == d));
      if (shared) wave[i] = std::max(wave[i], wave[j] + 1);
    }
  }
  return wave;
}

std::vector<std::pair<std::string, spec::QpState>> states_after_expected_error(const Scenario& s, const Workload& w) {
  std::vector<std::pair<std::string, spec::QpState>> out;
  if (!w.expect_status || *w.expect_status == "IBV_WC_SUCCESS") return out;
  for (const auto& ref : w.initiators()) {
    out.emplace_back(ref.name, spec::QpState::ERR);
    const Qp* q = s.qp(ref.name);
    bool remote = w.expect_status->rfind("IBV_WC_REM_", 0) == 0;
    if (q && q->type_name == "RC" && remote && q->connect) out.emplace_back(q->connect.name, spec::QpState::ERR);
  }
  return out;
}

void write_default_timeline(Scenario& s) {
  s.timeline.clear();
  auto add = [&](TimelineStep::Kind kind) -> TimelineStep& {
    TimelineStep t;
    t.kind = kind;
    t.path = "(default order)";
    s.timeline.push_back(std::move(t));
    return s.timeline.back();
  };
  if (!s.mws.empty()) {  // every window bound once its QP is ready, before any traffic
    auto& bind = add(TimelineStep::Kind::BindMw);
    for (const auto& w : s.mws) bind.mws.push_back(Ref{w.name, w.loc});
  }
  add(TimelineStep::Kind::Smoke);
  auto waves = workload_waves(s);
  int wave_count = waves.empty() ? 0 : *std::max_element(waves.begin(), waves.end()) + 1;
  for (int k = 0; k < wave_count; ++k) {
    auto& step = add(TimelineStep::Kind::Workloads);
    for (size_t i = 0; i < s.workloads.size(); ++i)
      if (waves[i] == k) step.workloads.push_back(Ref{s.workloads[i].name, s.workloads[i].loc});
  }
  // Round k: every QP's k-th extra transition. Rounds keep today's interleaving across QPs.
  std::vector<std::vector<TimelineStep::QpTransition>> rounds;
  for (const auto& q : s.qps) {
    size_t k = 0;
    for (size_t i = 0; i < q.transitions.size(); ++i) {
      if (q.transitions[i].bring_up) continue;
      if (rounds.size() <= k) rounds.emplace_back();
      rounds[k++].push_back({q.name, i});
    }
  }
  for (auto& round : rounds) add(TimelineStep::Kind::Transition).transitions = std::move(round);
  if (!rounds.empty()) add(TimelineStep::Kind::Smoke).after_recovery = true;
}

}  // namespace qpo::scenario
