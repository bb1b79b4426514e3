// Script workloads' own checks, which need the Lua VM: each script loads in a sandboxed
// state, defines a role function, and its setup(args) accepts the workload's args (Q701).
// The checks that need no VM (Q502, Q702) are check/scripts.cpp.
#include <cstdlib>
#include <map>
#include <mutex>

#include "lua/workload.h"
#include "util/strings.h"
#include "validate/validate.h"
#include "workload/spec.h"

namespace qpo::validate {

namespace {

using scenario::Workload;

// setup() errors name an option as 'key' ("unknown option 'sizee'") or start with it
// ("duration is a number of seconds > 0"): point at that arg when there is one.
const scenario::ScriptArg* arg_named_in(const Workload& w, const std::string& message) {
  for (const auto& a : w.args)
    if (message.find("'" + a.key + "'") != std::string::npos) return &a;
  std::string first = message.substr(0, message.find(' '));
  if (const auto* a = w.arg(first)) return a;
  // A unit reader's complaint quotes the value it read: "qpo.rate('10Gbs'): not a ...".
  const scenario::ScriptArg* quoted = nullptr;
  for (const auto& a : w.args)
    if (a.value.kind == scenario::ScriptValue::Kind::String && !a.value.text.empty() &&
        message.find("('" + a.value.text + "')") != std::string::npos) {
      if (quoted) return nullptr;  // two args hold that text: say neither
      quoted = &a;
    }
  return quoted;
}

// A built-in's error comes from the shipped Lua ("lua/qpo/perf.lua:84: qpo.rate(...)"): the
// file and line are ours, not the user's, so the message starts after them.
std::string without_builtin_position(const Workload& w, const std::string& message) {
  if (w.script.rfind("builtin:", 0) != 0) return message;
  auto lua = message.find(".lua:");
  if (lua == std::string::npos || message.find(' ') < lua) return message;
  auto colon = message.find(": ", lua + 5);
  if (colon == std::string::npos) return message;
  for (size_t i = lua + 5; i < colon; ++i)
    if (message[i] < '0' || message[i] > '9') return message;
  return message.substr(colon + 2);
}

class ScriptSetupChecker {
 public:
  ScriptSetupChecker(const scenario::Scenario& s, diag::DiagSink& sink) : s_(s), sink_(sink) {}

  void run() {
    for (const auto& w : s_.workloads)
      if (!w.script.empty() && initiators_resolve(w)) setup(w, "workloads." + w.name);
  }

 private:
  // A workload naming a QP that does not exist has its Q201 already; its workers cannot be built.
  bool initiators_resolve(const Workload& w) const {
    for (const auto& ref : w.initiators())
      if (!s_.qp(ref.name)) return false;
    return true;
  }

  // The script's own checks: load it and run setup(args) as `qpo run` would, minus devices.
  void setup(const Workload& w, const std::string& path) {
    std::string problem = checked(workload::script_spec(s_, w));
    if (problem.empty()) return;
    // perf.setup lists the known options after an unknown one, resolve_script the built-ins
    // after an unknown name: the list goes to the hint, with a did-you-mean.
    std::string message = without_builtin_position(w, problem), list_name, list;
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

  // A check runs the script in a forked child (lua/isolate.h): about a millisecond of system
  // time in a small process, more in a big one. Generated scenarios repeat one workload many
  // times, so identical (script, args, roles) are checked once per scenario; a built-in script
  // is compiled in and cannot change (unless QPO_LUA_DIR points elsewhere), so its answers also hold for the whole process (a suite
  // validating many scenarios, the unit tests' 30,000 mutated ones).
  std::string checked(const lua::WorkloadSpec& spec) {
    std::string key = spec.script + "\n" + spec.args.to_json();
    for (const auto& worker : spec.workers) key += "\n" + worker.role;
    auto it = memo_.find(key);
    if (it != memo_.end()) return it->second;
    // QPO_LUA_DIR replaces the built-ins with files someone may be editing: no process memo then.
    bool builtin = spec.script.rfind("builtin:", 0) == 0 && !std::getenv("QPO_LUA_DIR");
    if (builtin) {
      std::lock_guard lock(builtin_mutex());
      auto b = builtin_memo().find(key);
      if (b != builtin_memo().end()) return memo_.emplace(key, b->second).first->second;
    }
    std::string answer = lua::check_workload(spec);
    // Only acceptances are kept for the process: a refusal may be the child's (a fork that
    // failed, a machine too busy to finish setup in time), not the script's.
    if (builtin && answer.empty()) {
      std::lock_guard lock(builtin_mutex());
      if (builtin_memo().size() < kMaxBuiltinMemo) builtin_memo().emplace(key, answer);
    }
    return memo_.emplace(key, std::move(answer)).first->second;
  }

  static constexpr size_t kMaxBuiltinMemo = 4096;  // distinct (args, roles): bounded memory
  static std::mutex& builtin_mutex() {
    static std::mutex m;
    return m;
  }
  static std::map<std::string, std::string>& builtin_memo() {
    static std::map<std::string, std::string> memo;
    return memo;
  }

  const scenario::Scenario& s_;
  diag::DiagSink& sink_;
  std::map<std::string, std::string> memo_;
};

}  // namespace

void check_script_setups(const scenario::Scenario& s, diag::DiagSink& sink) { ScriptSetupChecker(s, sink).run(); }

check::Checked validate(const scenario::Scenario& s, diag::DiagSink& sink) {
  return validate(scenario::Scenario(s), sink);
}

check::Checked validate(scenario::Scenario&& s, diag::DiagSink& sink) {
  check::Checked checked = check::validate(std::move(s), sink);
  check_script_setups(checked.model(), sink);
  return checked;
}

}  // namespace qpo::validate
