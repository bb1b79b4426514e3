// `workers:` against the QPs a workload drives: more threads than QPs leave threads idle (Q152).
#include <map>

#include "check/validate.h"
#include "diag/diagnostic.h"

namespace qpo::check {

void check_workers(const scenario::Scenario& s, diag::DiagSink& sink) {
  // An op workload on a group is one workload per member: count them by the group's name.
  std::map<std::string, size_t> members;
  for (const auto& w : s.workloads)
    if (!w.group.empty()) ++members[w.group];
  std::map<std::string, bool> warned;
  for (const auto& w : s.workloads) {
    if (w.workers <= 1) continue;
    std::string name = w.group.empty() ? w.name : w.group;
    size_t qps = w.group.empty() ? w.initiators().size() : members[w.group];
    if (w.workers <= qps || warned[name]) continue;
    warned[name] = true;
    auto& d = sink.warning("Q152", w.workers_loc, "workloads." + name + ".workers",
                           "workers: " + std::to_string(w.workers) + " on " + std::to_string(qps) + " QP" +
                               (qps == 1 ? "" : "s") + ": a worker drives at least one QP, so " +
                               std::to_string(qps) + " run");
    d.hint = "lower workers: to at most the QP count";
  }
}

}  // namespace qpo::check
