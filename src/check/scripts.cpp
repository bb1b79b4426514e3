// Script workloads (`script:`), checked without devices: the script loads, defines a role
// function, and its setup(args) accepts the workload's args (Q701); every threshold names a
// field the script reports (Q702); every initiator has a peer to be its target (Q502).
#include <map>
#include <set>

#include "check/script_spec.h"
#include "check/validate.h"
#include "scenario/thresholds.h"
#include "util/strings.h"

namespace qpo::check {

namespace {

using scenario::Workload;

const std::set<std::string> kBandwidthFields{"bw_avg", "bw_peak", "msg_rate"};
const std::set<std::string> kLatencyFields{"t_min", "t_max", "t_typical", "t_avg", "t_stdev", "p99", "p999"};
const std::set<std::string> kIncastFields{"bw_avg", "msg_rate", "loss"};

// The summary fields each shipped script's report() fills (lua/qpo/perf.lua report_bw and
// report_lat, lua/examples/ud_incast.lua). Scripts from a path are only judged at run time.
const std::set<std::string>* reported_fields(const std::string& script) {
  static const std::map<std::string, const std::set<std::string>*> builtins{
      {"builtin:send_bw", &kBandwidthFields},           {"builtin:write_bw", &kBandwidthFields},
      {"builtin:read_bw", &kBandwidthFields},           {"builtin:atomic_bw", &kBandwidthFields},
      {"builtin:examples/mixed_burst", &kBandwidthFields}, {"builtin:examples/write_bw_hook", &kBandwidthFields},
      {"builtin:send_lat", &kLatencyFields},            {"builtin:write_lat", &kLatencyFields},
      {"builtin:read_lat", &kLatencyFields},            {"builtin:examples/ud_incast", &kIncastFields}};
  auto it = builtins.find(script);
  return it == builtins.end() ? nullptr : it->second;
}

// setup() errors name an option as 'key' ("unknown option 'sizee'") or start with it
// ("duration is a number of seconds > 0"): point at that arg when there is one.
const scenario::ScriptArg* arg_named_in(const Workload& w, const std::string& message) {
  for (const auto& a : w.args)
    if (message.find("'" + a.key + "'") != std::string::npos) return &a;
  std::string first = message.substr(0, message.find(' '));
  return w.arg(first);
}

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
    bool resolved = true;
    for (const auto& ref : w.initiators()) {
      const auto* q = s_.qp(ref.name);
      if (!q) {
        resolved = false;  // check_references reported it
        continue;
      }
      if (!q->connect) {
        auto& d = sink_.error("Q502", ref.loc, path + ".qp", "workload QP '" + q->name + "' has no 'connect:' peer");
        d.rule = "a script's target worker drives the initiator's peer QP";
        d.hint = "add 'connect: <peer QP>' to QP '" + q->name + "'";
      }
    }
    if (resolved) setup(w, path);
    thresholds(w, path);
  }

  // The script's own checks: load it and run setup(args) as `qpo run` would, minus devices.
  void setup(const Workload& w, const std::string& path) {
    std::string problem = checked(script_spec(s_, w));
    if (problem.empty()) return;
    // perf.setup lists the known options after an unknown one, resolve_script the built-ins
    // after an unknown name: the list goes to the hint, with a did-you-mean.
    std::string message = problem, list_name, list;
    for (const char* name : {"options", "built-ins"}) {
      std::string opener = std::string(" (") + name + ": ";
      auto at = message.find(opener);
      if (at == std::string::npos || message.back() != ')') continue;
      list_name = name;
      list = message.substr(at + opener.size(), message.size() - at - opener.size() - 1);
      message = message.substr(0, at);
    }
    const auto* arg = arg_named_in(w, message);
    auto& d = sink_.error("Q701", arg ? arg->loc : w.script_loc, arg ? path + ".args." + arg->key : path + ".script",
                          "script " + w.script + ": " + message);
    d.rule = "the script's setup(args) must accept the workload (qpo validate runs it, without devices)";
    if (list.empty()) {
      d.hint = "see the script's setup() and docs/lua.md for its options";
      return;
    }
    std::vector<std::string> known;
    for (auto word : util::split(list, list_name == "options" ? ' ' : ','))
      if (!util::trim(word).empty()) known.emplace_back(util::trim(word));
    std::string wrong = arg ? arg->key : w.script.substr(w.script.find(':') + 1);
    auto guess = util::did_you_mean(wrong, known);
    d.hint = (guess.empty() ? "" : "did you mean '" + guess + "'? ") + list_name + ": " + list;
  }

  // A Lua state per workload costs about a millisecond; generated scenarios repeat one
  // workload many times, so identical (script, args, roles) are checked once.
  std::string checked(const lua::WorkloadSpec& spec) {
    std::string key = spec.script + "\n" + spec.args.to_json();
    for (const auto& worker : spec.workers) key += "\n" + worker.role;
    auto it = memo_.find(key);
    if (it == memo_.end()) it = memo_.emplace(key, lua::check_workload(spec)).first;
    return it->second;
  }

  void thresholds(const Workload& w, const std::string& path) {
    const auto* fields = reported_fields(w.script);
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
  std::map<std::string, std::string> memo_;
};

}  // namespace

void check_scripts(const scenario::Scenario& s, diag::DiagSink& sink) { ScriptChecker(s, sink).run(); }

}  // namespace qpo::check
