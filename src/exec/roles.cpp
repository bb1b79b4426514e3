#include "exec/roles.h"

namespace qpo::exec {

spec::QpState predicted_state(const scenario::Qp& q, bool all) {
  spec::QpState s = spec::QpState::RESET;
  for (const auto& t : q.transitions)
    if ((all || t.bring_up) && t.predicted_ok && !(t.expect && t.expect->errno_value)) s = t.to;
  return s;
}

bool predicted_reset(const scenario::Qp& q) {
  for (const auto& t : q.transitions)
    if (!t.bring_up && t.predicted_ok && t.to == spec::QpState::RESET) return true;
  return false;
}

std::vector<SmokePair> smoke_pairs(const scenario::Scenario& s, bool after_transitions) {
  std::vector<SmokePair> out;
  int index = 0;
  for (const auto& a : s.qps) {
    const auto* b = s.qp(a.connect.name);
    if (!b || b == &a) continue;
    bool ud = a.type_name == "UD";
    if (!ud && a.type_name != "RC" && a.type_name != "UC") continue;
    if (b->type_name != a.type_name) continue;
    if (!ud && a.cap.max_send_wr == 0) continue;
    if (b->cap.max_recv_wr == 0 && !b->srq) continue;
    auto sa = predicted_state(a, after_transitions), sb = predicted_state(*b, after_transitions);
    if (sa != spec::QpState::RTS) continue;
    if (ud ? (sb != spec::QpState::RTR && sb != spec::QpState::RTS) : sb != spec::QpState::RTS) continue;
    if (after_transitions && !predicted_reset(a) && !predicted_reset(*b)) continue;
    SmokePair p;
    p.sender = a.name;
    p.receiver = b->name;
    p.index = ++index;
    if (!ud)
      for (const auto& t : b->transitions)
        // Access as it stands when this smoke runs: bring-up only, or after every transition.
        if (const auto* f = t.attr("qp_access_flags"); f && t.predicted_ok && (after_transitions || t.bring_up))
          p.rdma_write = (f->number & 0x2) != 0;
    out.push_back(p);
  }
  return out;
}

std::vector<int> workload_waves(const scenario::Scenario& s) {
  std::vector<int> wave(s.workloads.size(), 0);
  auto ends = [&](const scenario::Workload& w) {
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

uint32_t pattern_seed(const std::string& name) {
  uint32_t h = 2166136261u;  // FNV-1a
  for (unsigned char c : name) h = (h ^ c) * 16777619u;
  return h;
}

}  // namespace qpo::exec
