// Script workloads (`script:`), checked without running them: every threshold names a field
// the script reports (Q702); every initiator has a peer to be its target (Q502); a latency
// built-in on the device's clock has a send CQ that can give it timestamps (Q704-Q706). Running the
// script's setup(args) (Q701) needs the Lua VM: validate/script_setup.cpp, a layer above.
#include <algorithm>
#include <map>
#include <vector>

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
    device_clock(w, path);
  }

  // `clock: device` (lua/qpo/perf.lua, qp:pingpong): the initiator reads every completion of
  // its send CQ itself, through ibv_start_poll, for the device's timestamp of each iteration.
  void device_clock(const Workload& w, const std::string& path) {
    const auto* clock = w.arg("clock");
    if (!workload::latency_builtin(w.script) || !clock || clock->value.text != "device") return;
    // read_lat signals every read whatever cq_mod says; send_lat and write_lat pass it on.
    const auto* cq_mod = w.script == "builtin:read_lat" ? nullptr : w.arg("cq_mod");
    if (cq_mod && !is_one(cq_mod->value)) {
      auto& d = sink_.error("Q706", cq_mod->loc, path + ".args.cq_mod",
                            "clock: device times each iteration by its own completion; cq_mod is " + cq_mod->value.text);
      d.rule = "on the device's clock every work request is signaled (cq_mod: 1)";
      d.hint = "drop cq_mod, or use clock: host";
    }
    auto users = cq_users(w);
    for (const auto& ref : w.initiators()) {
      const auto* q = s_.qp(ref.name);
      const auto* cq = q ? s_.cq(q->send_cq.name) : nullptr;
      if (!cq) continue;  // check_references reported it
      if (!cq->timestamps) {
        auto& d = sink_.error("Q704", clock->loc, path + ".args.clock",
                              "clock: device reads QP '" + q->name + "''s send CQ '" + cq->name +
                                  "' for completion timestamps, and it has no 'timestamps: true'");
        d.rule = "a device stamps completions only in a CQ created with IBV_WC_EX_WITH_COMPLETION_TIMESTAMP";
        d.hint = "add 'timestamps: true' to cqs." + cq->name + " (the run then needs the cq_timestamps capability)";
      }
      const auto& on_cq = users[cq->name];
      auto other = std::find_if(on_cq.begin(), on_cq.end(), [&](const std::string& n) { return n != q->name; });
      if (other != on_cq.end()) {
        auto& d = sink_.error("Q705", clock->loc, path + ".args.clock",
                              "clock: device needs QP '" + q->name + "''s send CQ '" + cq->name + "' to itself; QP '" +
                                  *other + "' of the workload completes there too");
        d.rule = "on the device's clock the initiator reads every completion of its send CQ itself, so no other "
                 "QP of the workload may complete there";
        d.hint = "give QP '" + q->name + "' a CQ of its own";
      }
    }
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

  static bool is_one(const scenario::ScriptValue& v) {
    using K = scenario::ScriptValue::Kind;
    return (v.kind == K::Int && v.integer == 1) || (v.kind == K::Number && v.number == 1.0);
  }

  // For each CQ, the first two QPs of the workload (its initiators and their peers: a worker
  // each) that complete there. An initiator's own receives may share its send CQ (its worker
  // reads them too); another QP may not.
  std::map<std::string, std::vector<std::string>> cq_users(const Workload& w) const {
    std::map<std::string, std::vector<std::string>> users;
    auto note = [&](const scenario::Qp* q) {
      if (!q) return;
      for (const auto* cq : {&q->send_cq.name, &q->recv_cq.name}) {
        auto& list = users[*cq];
        if (list.size() < 2 && std::find(list.begin(), list.end(), q->name) == list.end()) list.push_back(q->name);
      }
    };
    for (const auto& ref : w.initiators()) {
      const auto* q = s_.qp(ref.name);
      note(q);
      if (q && !q->connect.name.empty()) note(s_.qp(q->connect.name));
    }
    return users;
  }

  const scenario::Scenario& s_;
  diag::DiagSink& sink_;
};

}  // namespace

void check_scripts(const scenario::Scenario& s, diag::DiagSink& sink) { ScriptChecker(s, sink).run(); }

}  // namespace qpo::check
