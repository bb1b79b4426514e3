#include "scenario/timeline.h"

#include <algorithm>
#include <unordered_map>

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
    case TimelineStep::Kind::Link: return "link";
    case TimelineStep::Kind::BindMw: return "bind";
    case TimelineStep::Kind::InvalidateMw: return "invalidate";
  }
  return "?";
}

std::vector<int> workload_waves(const Scenario& s) {
  // A workload goes one wave after the last one that shares a QP with it (either end of any
  // of its initiators: a script on `qp: [s1, s2]` drives s1, s2 and their peers): the last
  // wave of each QP, kept as the workloads are placed, makes this linear. The members of an op
  // workload on a QP group (consecutive in `workloads`) share one wave: they run together.
  std::vector<int> wave(s.workloads.size(), 0);
  std::unordered_map<std::string, int> last;  // QP -> the last wave that uses it
  auto ends = [&](const Workload& w) {
    std::vector<std::string> out;
    for (const auto& ref : w.initiators()) {
      out.push_back(ref.name);
      if (const auto* q = s.qp(ref.name); q && q->connect) out.push_back(q->connect.name);
    }
    return out;
  };
  auto after = [&](const std::string& qp) {
    auto it = qp.empty() ? last.end() : last.find(qp);
    return it == last.end() ? 0 : it->second + 1;
  };
  for (size_t i = 0; i < s.workloads.size();) {
    size_t end = i + 1;
    if (!s.workloads[i].group.empty())
      while (end < s.workloads.size() && s.workloads[end].group == s.workloads[i].group) ++end;
    int k = 0;
    for (size_t j = i; j < end; ++j)
      for (const auto& qp : ends(s.workloads[j])) k = std::max(k, after(qp));
    for (size_t j = i; j < end; ++j) {
      wave[j] = k;
      for (const auto& qp : ends(s.workloads[j])) last[qp] = std::max(last[qp], k);
    }
    i = end;
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
    if (q && q->qp_type == spec::QpType::RC && remote && q->connect) out.emplace_back(q->connect.name, spec::QpState::ERR);
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
