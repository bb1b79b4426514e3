// The timeline's own rules: workloads that run together (`workloads: [a, b]`, or the default
// order's waves) must not write the same bytes, or neither's data check means anything.
#include <algorithm>

#include "check/validate.h"

namespace qpo::check {

namespace {

struct Written {
  const scenario::Workload* w;
  std::string mr;
  uint64_t begin, end;  // [begin, end)
};

// The bytes an op workload writes: the remote MR for writes and atomics, the local MR for reads.
std::optional<Written> written_by(const scenario::Workload& w) {
  if (w.op.empty() || !w.script.empty()) return std::nullopt;
  bool atomic = w.op.rfind("atomic", 0) == 0;
  if (w.op == "rdma_read" && w.local_mr) return Written{&w, w.local_mr.name, w.offset, w.offset + w.size};
  if ((w.op.rfind("rdma_write", 0) == 0 || atomic) && w.remote_mr)
    return Written{&w, w.remote_mr.name, w.offset, w.offset + (atomic ? 8 : w.size)};
  return std::nullopt;
}

}  // namespace

void check_timeline(const scenario::Scenario& s, diag::DiagSink& sink) {
  for (const auto& step : s.timeline) {
    if (step.kind != scenario::TimelineStep::Kind::Workloads || step.workloads.size() < 2) continue;
    std::vector<Written> writes;
    for (const auto& ref : step.workloads)
      if (const auto* w = s.workload(ref.name))
        if (auto x = written_by(*w)) writes.push_back(*x);
    for (size_t i = 0; i < writes.size(); ++i)
      for (size_t j = 0; j < i; ++j) {
        const auto &a = writes[j], &b = writes[i];
        if (a.mr != b.mr || a.end <= b.begin || b.end <= a.begin) continue;
        auto& d = sink.warning("Q512", step.loc.given() ? step.loc : b.w->loc, step.path,
                               "workloads '" + a.w->name + "' and '" + b.w->name + "' run together and both write bytes " +
                                   std::to_string(std::max(a.begin, b.begin)) + ".." +
                                   std::to_string(std::min(a.end, b.end) - 1) + " of MR '" + a.mr + "'");
        d.rule = "concurrent writers of the same bytes leave them in an undefined order; neither data check holds";
        d.hint = "give one an offset: past the other's bytes, or run them one after the other";
      }
  }
}

}  // namespace qpo::check
