// Script workloads (`script:`), checked without running them: every threshold names a field
// the script reports (Q702); every initiator has a peer to be its target (Q502). Running the
// script's setup(args) (Q701) needs the Lua VM: validate/script_setup.cpp, a layer above.
#include "check/validate.h"
#include "scenario/thresholds.h"
#include "util/strings.h"
#include "workload/builtins.h"

namespace qpo::check {

namespace {

using scenario::Workload;

class ScriptChecker {
 public:
  ScriptChecker(const scenario::Scenario& s, diag::DiagSink& sink) : s_(s), sink_(sink) {}

  void run() {
    for (const auto& w : s_.workloads)
      if (!w.script.empty()) workload(w);
  }

 private:
  void workload(const Workload& w) {
    std::string path = "workloads." + w.name;
    for (const auto& ref : w.initiators()) {
      const auto* q = s_.qp(ref.name);
      if (!q) continue;  // check_references reported it
      if (!q->connect) {
        auto& d = sink_.error("Q502", ref.loc, path + ".qp", "workload QP '" + q->name + "' has no 'connect:' peer");
        d.rule = "a script's target worker drives the initiator's peer QP";
        d.hint = "add 'connect: <peer QP>' to QP '" + q->name + "'";
      }
    }
    thresholds(w, path);
  }

  void thresholds(const Workload& w, const std::string& path) {
    const auto* fields = workload::reported_fields(w.script);
    if (!fields) return;
    for (const auto& t : w.thresholds) {
      if (fields->count(t.field)) continue;
      auto& d = sink_.error("Q702", t.loc, path + ".thresholds." + t.name,
                            t.name + " needs '" + t.field + "', which " + w.script + " does not report");
      d.rule = "a threshold compares a field of the script's summary (its report())";
      std::vector<std::string> usable;
      for (const auto& k : scenario::threshold_kinds())
        if (fields->count(k.field)) usable.emplace_back(k.name);
      d.hint = w.script + " takes " + util::join(usable, ", ");
    }
  }

  const scenario::Scenario& s_;
  diag::DiagSink& sink_;
};

}  // namespace

void check_scripts(const scenario::Scenario& s, diag::DiagSink& sink) { ScriptChecker(s, sink).run(); }

}  // namespace qpo::check
