#include "plan/script_turn.h"

#include <set>

#include "plan/plan.h"

namespace qpo::plan {

namespace {

// What a workload of a stage holds that another running beside it must not share (a CQ it
// may: every reader then polls it through the run's router).
struct Holds {
  std::set<ObjectId> qps, cqs, srqs;
  void add(const Plan& p, QpId id) {
    if (id >= p.qps.size()) return;  // none, or an external peer's id
    qps.insert(id);
    const auto& q = p.qps[id];
    cqs.insert(q.send_cq);
    cqs.insert(q.recv_cq);
    if (q.srq != kNoObject) srqs.insert(q.srq);
  }
  void add(const Holds& o) {
    qps.insert(o.qps.begin(), o.qps.end());
    cqs.insert(o.cqs.begin(), o.cqs.end());
    srqs.insert(o.srqs.begin(), o.srqs.end());
  }
  bool shares(const Holds& o) const { return any(qps, o.qps) || any(srqs, o.srqs); }
  bool shares_cq(const Holds& o) const { return any(cqs, o.cqs); }

 private:
  static bool any(const std::set<ObjectId>& a, const std::set<ObjectId>& b) {
    for (auto id : a)
      if (b.count(id)) return true;
    return false;
  }
};

}  // namespace

std::vector<ScriptTurn> script_turns(const Plan& plan, const std::vector<int>& stage) {
  std::vector<ScriptTurn> turns(stage.size(), ScriptTurn::Beside);
  Holds ops;  // the op workloads' (and stock tools' conversations'): initiators and receivers
  for (int i : stage) {
    const auto& run = plan.workloads.at(static_cast<size_t>(i));
    if (run.params.is_script()) continue;
    ops.add(plan, run.qp);
    for (auto id : run.receiver_ids) ops.add(plan, id);
  }
  // The scripts beside run one after another but are routed all at once: none may hold a QP
  // or an SRQ of an earlier one.
  Holds beside;
  for (size_t k = 0; k < stage.size(); ++k) {
    const auto& run = plan.workloads.at(static_cast<size_t>(stage[k]));
    if (!run.params.is_script()) continue;
    Holds mine;
    for (const auto& worker : run.worker_qps)
      for (const auto& q : worker) mine.add(plan, q.id);
    if (mine.shares(ops) || mine.shares(beside)) {
      turns[k] = ScriptTurn::AloneFirst;
      continue;
    }
    turns[k] = mine.shares_cq(ops) ? ScriptTurn::BesideSharedCq : ScriptTurn::Beside;
    beside.add(mine);
  }
  return turns;
}

const char* script_turn_text(ScriptTurn t) {
  switch (t) {
    case ScriptTurn::Beside: return "";
    case ScriptTurn::BesideSharedCq: return "with the stage's op workloads; their CQ read through the run's router";
    case ScriptTurn::AloneFirst: return "first, alone: it shares a QP or an SRQ with a workload of the stage";
  }
  return "";
}

}  // namespace qpo::plan
