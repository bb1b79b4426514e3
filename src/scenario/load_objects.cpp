// Loading of the named resource sections: hosts, devices, pds, mrs, cqs, srqs, xrcds, workloads.
#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cerrno>

#include "scenario/keys.h"
#include "scenario/loader_internal.h"
#include "spec/rules.h"
#include "util/command_template.h"
#include "util/errno_names.h"
#include "util/strings.h"
#include "util/ops.h"

namespace qpo::scenario::detail {

// Names become C identifiers in plans and file names in reports: keep them plain.
bool check_name(YamlReader& r, const std::string& name, const SourceLoc& loc, const std::string& path) {
  bool ok = !name.empty() && name.size() <= 64;
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.')) ok = false;
  if (!ok) {
    auto& d = r.sink().error("Q108", loc, path, "bad object name '" + name.substr(0, 64) + "'" +
                                                    (name.size() > 64 ? " (" + std::to_string(name.size()) + " bytes)" : ""));
    d.rule = "names: 1-64 characters from [A-Za-z0-9_.-]";
  }
  return ok;
}

namespace {

bool is_ip_address(const std::string& text) {
  unsigned char buf[16];
  return inet_pton(AF_INET, text.c_str(), buf) == 1 || inet_pton(AF_INET6, text.c_str(), buf) == 1;
}

// Runs `each(name, key_loc, path, node)` for every entry of a named section, and checks
// that the name is unique across all sections (one namespace keeps references unambiguous).
template <typename Fn>
void for_each_named(YamlReader& r, const yaml::Node& section, const std::string& section_name, Fn each) {
  if (!section.IsMap()) {
    if (!section.IsNull()) r.wrong_type(section, section_name, "a map of name: {...}");
    return;
  }
  for (const auto& kv : section) {
    if (!kv.first.IsScalar()) {
      r.wrong_type(kv.first, section_name, "a name");
      continue;
    }
    std::string name = kv.first.Scalar();
    std::string path = join_path(section_name, name);
    SourceLoc loc = r.loc(kv.first);
    if (!check_name(r, name, loc, path)) continue;
    each(name, loc, path, kv.second);
  }
}

// `existing` is what the section already holds under this name (an indexed lookup).
template <typename T>
bool check_unique(YamlReader& r, const T* existing, const std::string& name, const SourceLoc& loc,
                  const std::string& path) {
  if (!existing) return true;
  auto& d = r.sink().error("Q105", loc, path, "duplicate name '" + name + "'");
  d.related.push_back({existing->loc, "first defined here"});
  d.hint = "names must be unique within a section";
  return false;
}

// An empty entry (`a: {}` or `a:`) is fine; anything else must be a map.
std::vector<std::pair<std::string, yaml::Node>> fields(YamlReader& r, const yaml::Node& n, const std::string& path,
                                                       const std::vector<std::string>& allowed, const char* what) {
  if (n.IsNull()) return {};
  return r.entries(n, path, &allowed, what);
}

uint32_t to_u32(std::optional<uint64_t> v, uint32_t fallback) { return v ? static_cast<uint32_t>(*v) : fallback; }

// args, thresholds and a list of QPs only mean something to a script; size and iterations go
// to a script's args, so each may be written in one place only.
void check_script_only_keys(YamlReader& r, const Workload& w, const std::string& path, bool op_given) {
  if (w.script.empty()) {
    if (!op_given) return;  // already "needs 'op' or 'script'"
    auto complain = [&](const SourceLoc& at, const std::string& key, const std::string& what) {
      auto& d = r.sink().error("Q703", at, join_path(path, key), what + " on a workload without 'script:'");
      d.rule = "only script workloads take args, thresholds or several QPs; an op loop runs one QP";
      d.hint = "use e.g. 'script: builtin:write_bw' (docs/lua.md), or remove '" + key + "'";
    };
    if (w.args_loc.given()) complain(w.args_loc, "args", "args");
    if (w.thresholds_loc.given()) complain(w.thresholds_loc, "thresholds", "thresholds");
    if (!w.more_qps.empty()) complain(w.more_qps_loc, "qp", "a list of QPs");
    return;
  }
  // A script workload is judged by its script and thresholds, and runs no op loop: an `op:`
  // or an `expect:` would be shown by `qpo plan` and then silently ignored by the run.
  auto not_for_scripts = [&](const SourceLoc& at, const std::string& key, const std::string& why) {
    auto& d = r.sink().error("Q703", at, join_path(path, key), "'" + key + "' on a script workload");
    d.rule = why;
    d.hint = "remove '" + key + "', or drop 'script:' to use the built-in op loop";
  };
  if (op_given) not_for_scripts(w.op_loc, "op", "a script chooses its own operations; 'op' belongs to the built-in op loop");
  if (w.expect_status)
    not_for_scripts(w.expect_loc, "expect",
                    "a script reports a bad completion as its error (file:line, QP, status); thresholds judge its results");
  // MR names are workload keys, so the validator checks them as references (Q201/Q202).
  for (const char* key : {"local_mr", "remote_mr"}) {
    const ScriptArg* a = w.arg(key);
    if (!a) continue;
    auto& d = r.sink().error("Q703", a->loc, join_path(path, std::string("args.") + key),
                             std::string("'") + key + "' belongs in the workload, not in its args");
    d.rule = "MR names are workload keys, checked as references; the script receives them as args." + std::string(key);
    d.hint = std::string("move it up: '") + key + ": NAME' beside 'script:'";
  }
  for (const auto& [key, given] : {std::pair<const char*, SourceLoc>{"size", w.size_loc}, {"iterations", w.iterations_loc}}) {
    const ScriptArg* a = w.arg(key);
    if (!a || !given.given()) continue;
    auto& d = r.sink().error("Q105", a->loc, join_path(path, std::string("args.") + key),
                             std::string("'") + key + "' is given twice: in the workload and in its args");
    d.rule = "a workload's size and iterations are the script's args.size and args.iterations";
    d.related.push_back({given, "also given here"});
    d.hint = std::string("keep one of them");
  }
}

}  // namespace

// A launcher template must parse, name only known placeholders and start the agent ({command}).
static bool check_launcher(YamlReader& r, const yaml::Node& value, const std::string& path, const std::string& text) {
  std::string why;
  auto t = util::parse_command_template(text, &why);
  const auto& known = keys::launcher_placeholders();
  auto error = [&](const std::string& message) -> diag::Diagnostic& {
    auto& d = r.sink().error("Q163", r.loc(value), path, message);
    d.rule = "launcher: a command template; placeholders {" + util::join(known, "}, {") + "}; {command} starts the agent";
    return d;
  };
  if (!t) {
    error("launcher '" + text + "' is not a command template: " + why).hint = "e.g. launcher: \"srun -w {host} -N1 {command}\"";
    return false;
  }
  bool ok = true;
  for (const auto& name : t->placeholders)
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      auto& d = error("unknown placeholder {" + name + "} in the launcher");
      auto guess = util::did_you_mean(name, known);
      d.hint = (guess.empty() ? std::string() : "did you mean {" + guess + "}? ") + "known: {" + util::join(known, "}, {") +
               "}; write {{ and }} for literal braces";
      ok = false;
    }
  if (std::find(t->placeholders.begin(), t->placeholders.end(), "command") == t->placeholders.end()) {
    auto& d = error("the launcher has no {command}: the agent would never start");
    d.hint = "put {command} where the launched program goes: srun -w {host} -N1 {command}";
    ok = false;
  }
  return ok;
}

void load_hosts(YamlReader& r, const yaml::Node& n, Scenario& s) {
  for_each_named(r, n, "hosts", [&](const std::string& name, SourceLoc loc, const std::string& path, const yaml::Node& v) {
    if (!check_unique(r, s.host(name), name, loc, path)) return;
    Host h;
    h.name = name;
    h.loc = loc;
    for (auto& [key, value] : fields(r, v, path, keys::host(), "a host")) {
      if (key == "address")
        if (auto a = r.string(value, join_path(path, key))) h.address = *a;
      if (key == "launcher")
        if (auto t = r.string(value, join_path(path, key))) {
          if (check_launcher(r, value, join_path(path, key), *t)) h.launcher = *t;
        }
    }
    s.hosts.push_back(std::move(h));
  });
}

void load_devices(YamlReader& r, const yaml::Node& n, Scenario& s) {
  for_each_named(r, n, "devices", [&](const std::string& name, SourceLoc loc, const std::string& path, const yaml::Node& v) {
    if (!check_unique(r, s.device(name), name, loc, path)) return;
    Device d;
    d.name = name;
    d.loc = loc;
    for (auto& [key, value] : fields(r, v, path, keys::device(), "a device")) {
      std::string p = join_path(path, key);
      if (key == "host") d.host = r.ref(value, p);
      else if (key == "name") {
        if (auto x = r.string(value, p)) d.dev_name = *x;
      } else if (key == "port") {
        d.port = to_u32(r.uint(value, p, 255), 1);
      } else if (key == "gid_index") {
        if (value.IsScalar() && value.Scalar() == "auto") {
          d.gid_symbol = Symbol::Auto;
        } else if (value.IsScalar() && is_ip_address(value.Scalar())) {
          d.gid_symbol = Symbol::None;  // the GID whose IP this is (perftest users' habit)
          d.gid_ip = value.Scalar();
        } else if (auto x = r.uint(value, p, 255)) {
          d.gid_symbol = Symbol::None;
          d.gid_index = static_cast<uint32_t>(*x);
        }
      }
    }
    s.devices.push_back(std::move(d));
  });
}

void load_pds(YamlReader& r, const yaml::Node& n, Scenario& s) {
  for_each_named(r, n, "pds", [&](const std::string& name, SourceLoc loc, const std::string& path, const yaml::Node& v) {
    if (!check_unique(r, s.pd(name), name, loc, path)) return;
    Pd pd;
    pd.name = name;
    pd.loc = loc;
    for (auto& [key, value] : fields(r, v, path, keys::pd(), "a protection domain"))
      if (key == "device") pd.device = r.ref(value, join_path(path, key));
    if (!pd.device) {
      auto& d = r.sink().error("Q104", loc, path, "protection domain '" + name + "' needs 'device'");
      d.hint = "add 'device: <name from devices:>'";
    }
    s.pds.push_back(std::move(pd));
  });
}

std::optional<uint32_t> parse_access(YamlReader& r, const yaml::Node& n, const std::string& path) {
  const auto* names = spec::RuleTable::builtin().enum_values("access");
  std::vector<std::string> words;
  if (n.IsScalar()) {
    if (auto v = util::parse_uint(n.Scalar())) return static_cast<uint32_t>(*v);
    for (auto part : util::split(n.Scalar(), '|'))
      if (!util::trim(part).empty()) words.emplace_back(util::trim(part));
  } else if (n.IsSequence()) {
    for (size_t i = 0; i < n.size(); ++i)
      if (auto w = r.string(n[i], path + "[" + std::to_string(i) + "]")) words.push_back(*w);
  } else if (!n.IsNull()) {
    r.wrong_type(n, path, "a list of access flags such as [local_write, remote_write]");
    return std::nullopt;
  }
  uint32_t mask = 0;
  bool ok = true;
  for (const auto& w : words) {
    std::string full = util::to_upper(w);
    if (full.rfind("IBV_ACCESS_", 0) != 0) full = "IBV_ACCESS_" + full;
    auto it = std::find_if(names->begin(), names->end(), [&](const auto& e) { return e.first == full; });
    if (it == names->end()) {
      std::vector<std::string> short_names;
      for (const auto& e : *names) short_names.push_back(util::to_lower(e.first.substr(11)));
      auto& d = r.sink().error("Q106", r.loc(n), path, "unknown access flag '" + w + "'");
      d.rule = "enum ibv_access_flags";
      auto guess = util::did_you_mean(util::to_lower(w), short_names);
      d.hint = guess.empty() ? "known: " + util::join(short_names, ", ") : "did you mean '" + guess + "'?";
      ok = false;
      continue;
    }
    mask |= static_cast<uint32_t>(it->second);
  }
  if (!ok) return std::nullopt;
  return mask;
}

void load_mrs(YamlReader& r, const yaml::Node& n, Scenario& s) {
  for_each_named(r, n, "mrs", [&](const std::string& name, SourceLoc loc, const std::string& path, const yaml::Node& v) {
    if (!check_unique(r, s.mr(name), name, loc, path)) return;
    Mr m;
    m.name = name;
    m.loc = loc;
    m.access_loc = loc;
    for (auto& [key, value] : fields(r, v, path, keys::mr(), "a memory region")) {
      std::string p = join_path(path, key);
      if (key == "pd") m.pd = r.ref(value, p);
      else if (key == "size") {
        if (auto x = r.size(value, p)) m.size = *x;
      } else if (key == "access") {
        m.access_loc = r.loc(value);
        if (auto x = parse_access(r, value, p)) m.access = *x;
      } else if (key == "count") {
        if (auto c = r.uint(value, p, 1000000)) {
          if (*c == 0) r.sink().error("Q401", r.loc(value), p, "count must be at least 1");
          else m.count = static_cast<uint32_t>(*c);
        }
      } else if (key == "per_qp") {
        m.per_qp = r.ref(value, p);  // expanded with the QP groups (scenario/groups.cpp)
      }
    }
    if (!m.pd) {
      auto& d = r.sink().error("Q104", loc, path, "memory region '" + name + "' needs 'pd'");
      d.hint = "add 'pd: <a pd, or a device for its default PD>'";
    }
    s.mrs.push_back(std::move(m));
  });
}

void load_cqs(YamlReader& r, const yaml::Node& n, Scenario& s) {
  for_each_named(r, n, "cqs", [&](const std::string& name, SourceLoc loc, const std::string& path, const yaml::Node& v) {
    if (!check_unique(r, s.cq(name), name, loc, path)) return;
    Cq c;
    c.name = name;
    c.loc = loc;
    for (auto& [key, value] : fields(r, v, path, keys::cq(), "a completion queue")) {
      std::string p = join_path(path, key);
      if (key == "device") c.device = r.ref(value, p);
      else if (key == "depth") {
        // A depth that is not a number stays unwritten: its error is Q103, and the CQ is sized
        // as one without depth: (no Q601 about a default the file did not ask for).
        if (auto depth = r.uint(value, p, 0xFFFFFFFF)) {
          c.depth = static_cast<uint32_t>(*depth);
          c.depth_loc = r.loc(value);
        }
      }
      else if (key == "channel") {
        if (auto b = r.boolean(value, p)) c.channel = *b;
      } else if (key == "timestamps") {
        if (auto b = r.boolean(value, p)) c.timestamps = *b;
      }
    }
    if (!c.device) {
      auto& d = r.sink().error("Q104", loc, path, "completion queue '" + name + "' needs 'device'");
      d.hint = "add 'device: <name from devices:>'";
    }
    s.cqs.push_back(std::move(c));
  });
}

void load_srqs(YamlReader& r, const yaml::Node& n, Scenario& s) {
  for_each_named(r, n, "srqs", [&](const std::string& name, SourceLoc loc, const std::string& path, const yaml::Node& v) {
    if (!check_unique(r, s.srq(name), name, loc, path)) return;
    Srq q;
    q.name = name;
    q.loc = loc;
    for (auto& [key, value] : fields(r, v, path, keys::srq(), "a shared receive queue")) {
      std::string p = join_path(path, key);
      if (key == "pd") q.pd = r.ref(value, p);
      else if (key == "max_wr") q.max_wr = to_u32(r.uint(value, p, 0xFFFFFFFF), q.max_wr);
      else if (key == "max_sge") q.max_sge = to_u32(r.uint(value, p, 0xFFFFFFFF), q.max_sge);
      else if (key == "srq_limit") {
        q.srq_limit = to_u32(r.uint(value, p, 0xFFFFFFFF), q.srq_limit);
        q.srq_limit_loc = r.loc(value);
      }
    }
    if (!q.pd) r.sink().error("Q104", loc, path, "shared receive queue '" + name + "' needs 'pd'");
    s.srqs.push_back(std::move(q));
  });
}

void load_xrcds(YamlReader& r, const yaml::Node& n, Scenario& s) {
  for_each_named(r, n, "xrcds", [&](const std::string& name, SourceLoc loc, const std::string& path, const yaml::Node& v) {
    if (!check_unique(r, s.xrcd(name), name, loc, path)) return;
    Xrcd x;
    x.name = name;
    x.loc = loc;
    for (auto& [key, value] : fields(r, v, path, keys::xrcd(), "an XRC domain"))
      if (key == "device") x.device = r.ref(value, join_path(path, key));
    if (!x.device) r.sink().error("Q104", loc, path, "XRC domain '" + name + "' needs 'device'");
    s.xrcds.push_back(std::move(x));
  });
}

namespace {

constexpr uint64_t kMaxWorkers = 1024;
constexpr long long kMaxCpu = 4096;  // CPU_SETSIZE

// `workers: N`: threads that share the workload's QPs (Q150 when not 1 .. 1024).
void load_workers(YamlReader& r, const yaml::Node& value, const std::string& p, Workload& w) {
  auto x = r.uint(value, p);
  if (!x) return;
  w.workers_loc = r.loc(value);
  if (*x == 0 || *x > kMaxWorkers) {
    auto& d = r.sink().error("Q150", w.workers_loc, p,
                             "workers: " + std::to_string(*x) + " is not a thread count (1 .. " +
                                 std::to_string(kMaxWorkers) + ")");
    d.hint = "one thread drives many QPs (perftest -q); a few workers are enough for any QP count";
    return;
  }
  w.workers = static_cast<uint32_t>(*x);
}

// `pin: [0, 1]` or `cpus: [0, 1]`: CPU numbers, worker K on pin[K % size] (Q151 when not a
// list of CPU numbers 0 .. 4095 without repeats).
void load_pin(YamlReader& r, const yaml::Node& value, const std::string& p, Workload& w) {
  w.pin_loc = r.loc(value);
  auto bad = [&](const SourceLoc& at, const std::string& what) {
    auto& d = r.sink().error("Q151", at, p, what);
    d.hint = "a list of CPU numbers, e.g. 'pin: [0, 1]' (worker K runs on the K-th, round robin)";
  };
  if (!value.IsSequence() || value.size() == 0) {
    bad(w.pin_loc, "pin is a non-empty list of CPU numbers");
    return;
  }
  for (size_t i = 0; i < value.size(); ++i) {
    std::string item = p + "[" + std::to_string(i) + "]";
    const yaml::Node& c = value[i];
    long long cpu = -1;
    bool number = false;
    if (c.IsScalar()) try {
        size_t used = 0;
        cpu = std::stoll(c.Scalar(), &used);
        number = used == c.Scalar().size();
      } catch (const std::exception&) {
      }
    if (!number || cpu < 0 || cpu >= kMaxCpu) {
      bad(r.loc(c), "'" + (c.IsScalar() ? c.Scalar() : std::string("?")) + "' is not a CPU number (0 .. " +
                        std::to_string(kMaxCpu - 1) + ")");
      continue;
    }
    if (std::find(w.pin.begin(), w.pin.end(), cpu) != w.pin.end()) {
      bad(r.loc(c), "CPU " + std::to_string(cpu) + " is listed twice");
      continue;
    }
    w.pin.push_back(cpu);
  }
}

}  // namespace

void load_workloads(YamlReader& r, const yaml::Node& n, Scenario& s) {
  for_each_named(r, n, "workloads", [&](const std::string& name, SourceLoc loc, const std::string& path, const yaml::Node& v) {
    if (!check_unique(r, s.workload(name), name, loc, path)) return;
    Workload w;
    w.name = name;
    w.loc = loc;
    w.op_loc = loc;
    bool op_given = false;  // a bad op is reported once, as Q106, not again as missing
    for (auto& [key, value] : fields(r, v, path, keys::workload(), "a workload")) {
      std::string p = join_path(path, key);
      if (key == "qp") {
        if (value.IsSequence()) {
          // Several initiators (a script's fan-in); the first one is `qp` for every other pass.
          for (size_t i = 0; i < value.size(); ++i) {
            Ref q = r.ref(value[i], p + "[" + std::to_string(i) + "]");
            if (!q) continue;
            if (!w.qp) w.qp = q;
            else w.more_qps.push_back(q);
          }
          w.more_qps_loc = r.loc(value);
        } else {
          w.qp = r.ref(value, p);
        }
      } else if (key == "op") {
        op_given = true;
        w.op_loc = r.loc(value);
        if (auto x = r.string(value, p)) {
          // Any name of the op table (rdma_write, write, IBV_WR_RDMA_WRITE); kept as the enum.
          auto known = util::parse_op(*x);
          const auto& ops = keys::workload_ops();
          if (!known || !*util::op_info(*known).scenario) {
            std::string op = util::to_lower(*x);
            auto& d = r.sink().error("Q106", w.op_loc, p, "unknown operation '" + *x + "'");
            d.rule = "enum ibv_wr_opcode";
            auto guess = util::did_you_mean(op, ops);
            d.hint = guess.empty() ? "known: " + util::join(ops, ", ") : "did you mean '" + guess + "'?";
          } else {
            w.op = *known;
          }
        }
      } else if (key == "local_mr") w.local_mr = r.ref(value, p);
      else if (key == "remote_mr") w.remote_mr = r.ref(value, p);
      else if (key == "mcast") w.mcast = r.ref(value, p);
      else if (key == "invalidate") w.invalidate = r.ref(value, p);
      else if (key == "size") {
        if (auto x = r.size(value, p)) {
          w.size = *x;
          w.size_loc = r.loc(value);
        }
      } else if (key == "offset") {
        if (auto x = r.size(value, p)) {
          w.offset = *x;
          w.offset_loc = r.loc(value);
        }
      } else if (key == "iterations") {
        if (auto x = r.uint(value, p)) {
          w.iterations = *x;
          w.iterations_loc = r.loc(value);
        }
      } else if (key == "script") {
        if (auto x = r.string(value, p)) {
          w.script = *x;
          w.script_loc = r.loc(value);
        }
      } else if (key == "args") {
        load_script_args(r, value, p, w);
      } else if (key == "thresholds") {
        load_thresholds(r, value, p, w);
      } else if (key == "workers") {
        load_workers(r, value, p, w);
      } else if (key == "pin" || key == "cpus") {
        load_pin(r, value, p, w);
      } else if (key == "expect") {
        w.expect_loc = r.loc(value);
        for (auto& [ek, ev] : r.entries(value, p, &keys::expect(), "a workload expectation")) {
          if (ek == "status")
            if (auto st = r.string(ev, join_path(p, ek))) w.expect_status = util::to_upper(*st);
          if (ek == "errno") r.sink().error("Q101", r.loc(ev), join_path(p, ek), "a workload expects a completion 'status', not 'errno'");
        }
      }
    }
    if (!w.qp) r.sink().error("Q104", loc, path, "workload '" + name + "' needs 'qp'");
    if (!op_given && w.script.empty()) {
      auto& d = r.sink().error("Q104", loc, path, "workload '" + name + "' needs 'op' or 'script'");
      d.hint = "e.g. 'op: rdma_write'";
    }
    check_script_only_keys(r, w, path, op_given);
    s.workloads.push_back(std::move(w));
  });
}

namespace {

// "1%", "0.5%", "2" (percent either way)
std::optional<double> percent(YamlReader& r, const yaml::Node& n, const std::string& path) {
  if (!n.IsScalar()) {
    r.wrong_type(n, path, "a percentage such as 1% or 0.5%");
    return std::nullopt;
  }
  std::string s(util::trim(n.Scalar()));
  if (!s.empty() && s.back() == '%') s.pop_back();
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end != '\0' || !(v >= 0 && v <= 100)) {
    auto& d = r.sink().error("Q401", r.loc(n), path, "'" + n.Scalar() + "' is not a percentage in 0..100");
    d.hint = "write e.g. 1% or 0.5%";
    return std::nullopt;
  }
  return v;
}

}  // namespace

// "1ms", "250us", "0", "2s" -> microseconds
std::optional<uint64_t> duration_us(YamlReader& r, const yaml::Node& n, const std::string& path) {
  if (n.IsScalar()) {
    std::string s(util::trim(n.Scalar()));
    size_t digits = 0;
    while (digits < s.size() && std::isdigit(static_cast<unsigned char>(s[digits]))) ++digits;
    auto num = util::parse_uint(s.substr(0, digits));
    std::string unit = s.substr(digits);
    uint64_t factor = unit == "us" ? 1 : unit == "ms" ? 1000 : unit == "s" ? 1000000 : (unit.empty() && s == "0") ? 0 : 0;
    if (num && (factor || *num == 0) && *num <= 60000000) return *num * (factor ? factor : 1);
  }
  auto& d = r.sink().error("Q103", r.loc(n), path, "'" + (n.IsScalar() ? n.Scalar() : std::string("?")) + "' is not a duration");
  d.hint = "write e.g. 250us, 1ms or 2s";
  return std::nullopt;
}

void load_faults(YamlReader& r, const yaml::Node& n, Scenario& s) {
  for_each_named(r, n, "faults", [&](const std::string& name, SourceLoc loc, const std::string& path, const yaml::Node& v) {
    if (!check_unique(r, s.fault(name), name, loc, path)) return;
    Fault f;
    f.name = name;
    f.loc = loc;
    for (auto& [key, value] : fields(r, v, path, keys::fault(), "a fault")) {
      std::string p = join_path(path, key);
      if (key == "device") f.device = r.ref(value, p);
      else if (key == "loss") f.loss = percent(r, value, p).value_or(0);
      else if (key == "corrupt") f.corrupt = percent(r, value, p).value_or(0);
      else if (key == "duplicate") f.duplicate = percent(r, value, p).value_or(0);
      else if (key == "reorder") f.reorder = percent(r, value, p).value_or(0);
      else if (key == "delay") f.delay_us = duration_us(r, value, p).value_or(0);
      else if (key == "during") {
        if (auto x = r.string(value, p)) {
          if (*x != "traffic" && *x != "all") {
            auto& d = r.sink().error("Q106", r.loc(value), p, "unknown window '" + *x + "'");
            d.hint = "traffic (while workloads run) or all (from bring-up to teardown)";
          } else {
            f.during = *x;
          }
        }
      }
    }
    if (!f.device) r.sink().error("Q104", loc, path, "fault '" + name + "' needs 'device'");
    if (f.reorder > 0 && f.delay_us == 0) {
      auto& d = r.sink().error("Q104", loc, path, "reorder needs a delay");
      d.rule = "tc-netem(8): reordering works by letting some packets skip the delay";
      d.hint = "add e.g. delay: 1ms";
    }
    s.faults.push_back(std::move(f));
  });
}

// `wire: {events: {NAME: {qp, packets, psn | nth, transmission, action}}}`.
namespace {

// A count as `wire: expect:` writes it: 3, ">= 1", "<= 2", "> 0", "< 5", "2..4".
bool parse_count_range(const std::string& text, uint64_t* min, uint64_t* max) {
  auto trim = [](std::string t) {
    while (!t.empty() && t.front() == ' ') t.erase(t.begin());
    while (!t.empty() && t.back() == ' ') t.pop_back();
    return t;
  };
  std::string t = trim(text);
  auto num = [&](const std::string& x) { return util::parse_uint(trim(x)); };
  if (auto dots = t.find(".."); dots != std::string::npos) {
    auto a = num(t.substr(0, dots)), b = num(t.substr(dots + 2));
    if (!a || !b || *a > *b) return false;
    *min = *a, *max = *b;
    return true;
  }
  for (const char* op : {">=", "<=", ">", "<"}) {
    std::string o(op);
    if (t.rfind(o, 0) != 0) continue;
    auto v = num(t.substr(o.size()));
    if (!v) return false;
    if (o == ">=") *min = *v, *max = UINT64_MAX;
    else if (o == "<=") *min = 0, *max = *v;
    else if (o == ">") *min = *v + 1, *max = UINT64_MAX;
    else if (*v == 0) return false;
    else *min = 0, *max = *v - 1;
    return true;
  }
  auto v = num(t);
  if (!v) return false;
  *min = *max = *v;
  return true;
}

void load_wire_expect(YamlReader& r, const yaml::Node& list, Scenario& s) {
  if (!list.IsSequence()) {
    r.wrong_type(list, "wire.expect", "a list of {qp: NAME, FACT: VALUE}");
    return;
  }
  size_t i = 0;
  for (const auto& item : list) {
    std::string path = "wire.expect[" + std::to_string(i++) + "]";
    if (!item.IsMap()) {
      r.wrong_type(item, path, "a map {qp: NAME, FACT: VALUE}");
      continue;
    }
    WireExpect e;
    e.loc = r.loc(item);
    e.path = path;
    int facts = 0;
    for (auto& [key, value] : r.entries(item, path, nullptr, "a wire expectation")) {
      std::string p = join_path(path, key);
      if (key == "qp") {
        e.qp = r.ref(value, p);
        continue;
      }
      auto fact = util::parse_wire_fact(key);
      if (!fact) {
        auto& d = r.sink().error("Q101", r.loc(value), p, "unknown wire fact '" + key + "'");
        d.hint = "qp and one of: " + util::wire_fact_names();
        continue;
      }
      ++facts;
      e.fact = *fact;
      e.text = value.IsScalar() ? value.Scalar() : "";
      switch (util::wire_fact_info(*fact).kind) {
        case util::WireFactKind::Count:
          if (!value.IsScalar() || !parse_count_range(value.Scalar(), &e.min, &e.max))
            r.sink().error("Q103", r.loc(value), p, "'" + e.text + "' is not a count").hint = "write 3, \">= 1\", \"<= 2\" or \"2..4\"";
          break;
        case util::WireFactKind::Flag:
          if (auto b = r.boolean(value, p)) e.min = e.max = *b ? 1 : 0;
          break;
        case util::WireFactKind::Factor: {
          std::string t = e.text;
          if (!t.empty() && (t.back() == 'x' || t.back() == 'X')) t.pop_back();
          char* end = nullptr;
          double f = t.empty() ? 0 : std::strtod(t.c_str(), &end);
          if (!end || *end || !(f >= 1) || f > 1000)
            r.sink().error("Q103", r.loc(value), p, "'" + e.text + "' is not a factor from 1 to 1000").hint = "write e.g. 2x (half to twice the attribute's time)";
          else
            e.factor = f;
          break;
        }
      }
    }
    if (!e.qp) r.sink().error("Q104", e.loc, path, "a wire expectation needs 'qp' (the requester whose packets it reads)");
    if (facts != 1) r.sink().error("Q104", e.loc, path, "a wire expectation names exactly one fact").hint = util::wire_fact_names();
    s.wire_expects.push_back(std::move(e));
  }
}

}  // namespace

void load_wire(YamlReader& r, const yaml::Node& n, Scenario& s) {
  for (auto& [key, value] : fields(r, n, "wire", keys::wire(), "the wire section")) {
    if (key == "expect") load_wire_expect(r, value, s);
    if (key != "events") continue;
    for_each_named(r, value, "wire.events", [&](const std::string& name, SourceLoc loc, const std::string& path, const yaml::Node& v) {
      if (!check_unique(r, s.packet_event(name), name, loc, path)) return;
      PacketEvent e;
      e.name = name;
      e.loc = loc;
      for (auto& [k, x] : fields(r, v, path, keys::packet_event(), "a packet event")) {
        std::string p = join_path(path, k);
        if (k == "qp") {
          e.qp = r.ref(x, p);
        } else if (k == "psn") {
          if (auto u = r.uint(x, p, 0x7fffff)) e.psn = static_cast<uint32_t>(*u);
        } else if (k == "nth") {
          if (auto u = r.uint(x, p, 0xffffffff)) {
            if (*u == 0) r.sink().error("Q401", r.loc(x), p, "nth counts from 1 (the first packet)");
            else e.nth = static_cast<uint32_t>(*u);
          }
        } else if (k == "transmission") {
          // first | every | N: the Nth transmission of the PSN (1: the first, 2: its first retransmission)
          if (x.IsScalar() && (x.Scalar() == "first" || x.Scalar() == "every")) {
            e.transmission = x.Scalar() == "first" ? 1 : 0;
          } else if (auto u = r.uint(x, p, 255)) {
            if (*u == 0) r.sink().error("Q401", r.loc(x), p, "transmission counts from 1 (the first)").hint = "first, every, or N (2: the first retransmission)";
            else e.transmission = static_cast<uint32_t>(*u);
          }
        } else if (k == "delay") {
          e.delay_us = duration_us(r, x, p).value_or(0);
        } else if (k == "packets" || k == "action") {
          auto t = r.string(x, p);
          if (!t) continue;
          if (k == "packets") {
            if (auto pk = util::parse_event_packets(*t)) e.packets = *pk;
            else r.sink().error("Q106", r.loc(x), p, "unknown packets '" + *t + "'").hint = util::event_packets_names();
          } else {
            if (auto a = util::parse_event_action(*t)) e.action = *a;
            else r.sink().error("Q106", r.loc(x), p, "unknown action '" + *t + "'").hint = util::event_action_names();
          }
        }
      }
      if (!e.qp) r.sink().error("Q104", loc, path, "packet event '" + name + "' needs 'qp' (the QP whose packets it acts on)");
      if ((e.action == util::EventAction::Delay) != (e.delay_us > 0)) {
        auto& d = r.sink().error("Q104", loc, path,
                                 e.action == util::EventAction::Delay ? "packet event '" + name + "' delays: it needs 'delay' (e.g. 5ms)"
                                                                      : "packet event '" + name + "': 'delay' goes with action: delay");
        d.hint = "action: delay, delay: 5ms (longer than the gap to the next packet, it reorders them)";
      }
      if (e.psn.has_value() == e.nth.has_value()) {
        auto& d = r.sink().error("Q104", loc, path, "packet event '" + name + "' needs exactly one of 'psn' and 'nth'");
        d.hint = "psn: N (the packet N PSNs after the first it counts), nth: N (the Nth packet it counts)";
      }
      s.packet_events.push_back(std::move(e));
    });
  }
}

void load_mws(YamlReader& r, const yaml::Node& n, Scenario& s) {
  for_each_named(r, n, "mws", [&](const std::string& name, SourceLoc loc, const std::string& path, const yaml::Node& v) {
    if (!check_unique(r, s.mw(name), name, loc, path)) return;
    Mw w;
    w.name = name;
    w.loc = loc;
    w.type_loc = w.offset_loc = w.access_loc = loc;  // length_loc stays empty unless given
    for (auto& [key, value] : fields(r, v, path, keys::mw(), "a memory window")) {
      std::string p = join_path(path, key);
      if (key == "pd") w.pd = r.ref(value, p);
      else if (key == "mr") w.mr = r.ref(value, p);
      else if (key == "bind_qp") w.bind_qp = r.ref(value, p);
      else if (key == "type") {
        w.type_loc = r.loc(value);
        if (auto t = r.uint(value, p)) {
          if (*t == 1 || *t == 2) {
            w.type = static_cast<int>(*t);
          } else {
            auto& d = r.sink().error("Q120", w.type_loc, p, "memory window type " + std::to_string(*t) + " does not exist");
            d.rule = "enum ibv_mw_type: IBV_MW_TYPE_1 (bound by ibv_bind_mw) or IBV_MW_TYPE_2 (bound by IBV_WR_BIND_MW)";
            d.hint = "write type: 1 or type: 2";
          }
        }
      } else if (key == "offset") {
        w.offset_loc = r.loc(value);
        if (auto x = r.size(value, p)) w.offset = *x;
      } else if (key == "length") {
        w.length_loc = r.loc(value);
        if (auto x = r.size(value, p)) w.length = *x;
      } else if (key == "access") {
        w.access_loc = r.loc(value);
        if (auto x = parse_access(r, value, p)) w.access = *x;
      }
    }
    if (!w.mr) {
      auto& d = r.sink().error("Q104", loc, path, "memory window '" + name + "' needs 'mr'");
      d.hint = "add 'mr: <the MR the window opens onto>'";
    }
    if (!w.bind_qp) {
      auto& d = r.sink().error("Q104", loc, path, "memory window '" + name + "' needs 'bind_qp'");
      d.rule = "a bind is a work request: it is posted on a QP's send queue (ibv_bind_mw, IBV_WR_BIND_MW)";
      d.hint = "add 'bind_qp: <an RC or UC QP on the window's PD>'";
    }
    s.mws.push_back(std::move(w));
  });
}

namespace {

// `tool:` against the exchange's table: perftest's tools, rdma_cm's, none for ibv_pingpong.
void check_external_tool(YamlReader& r, External& e, const std::string& path) {
  if (e.tool.empty()) {
    if (e.exchange == External::Exchange::RdmaCm && e.exchange_loc.given()) {
      auto& d = r.sink().error("Q104", e.loc, path, "external peer '" + e.name + "' needs 'tool' with exchange rdma_cm");
      d.rule = "the tool says the conversation after the connection: ucmatose (the server sends all its messages "
               "first, the client answers with as many), rdma_server or rdma_client (one 16-byte message each way), "
               "udaddy (UD: the client's messages first, then as many back), rping (RDMA READ and WRITE of "
               "buffers each side advertises)";
      d.hint = "add 'tool: ucmatose' (or rdma_server when the tool serves, rdma_client when qpo does)";
    }
    return;
  }
  std::string p = path + ".tool";
  if (e.exchange == External::Exchange::IbvPingpong) {
    auto& d = r.sink().error("Q170", e.tool_loc, p, "'tool' names a perftest or rdmacm-utils tool; exchange " +
                                                        std::string(External::exchange_name(e.exchange)) +
                                                        " has none to choose");
    d.hint = "remove tool (ibv_pingpong's tool follows from the QP type: RC or UD)";
    e.tool.clear();
    return;
  }
  bool known = false;
  std::string names;
  if (e.exchange == External::Exchange::Perftest) {
    for (const auto& t : External::kPerftestTools) known |= e.tool == t.name;
    names = "ib_write_bw, ib_read_bw, ib_send_bw, ib_send_lat or ib_write_lat";
  } else {
    known = External::cm_tool(e.tool) != nullptr;
    names = "ucmatose, rdma_server, rdma_client, udaddy or rping";
  }
  if (known) return;
  auto& d = r.sink().error("Q170", e.tool_loc, p, "unknown tool '" + util::printable(e.tool, 64) + "'");
  d.rule = "exchange " + std::string(External::exchange_name(e.exchange)) + " plays " + names;
  d.hint = e.exchange == External::Exchange::Perftest
               ? "leave tool out for the bandwidth test of the workload's op, or write tool: ib_send_lat (ib_write_lat)"
               : "write tool: ucmatose, rdma_server (the tool serves), rdma_client (qpo serves), udaddy (UD) or rping";
  e.tool.clear();
}

// exchange values: the peer's values given (exactly one of values and values_file), no tool and
// no connection; the values keys belong to that exchange alone.
void check_values_keys(YamlReader& r, const External& e, const std::string& path) {
  bool given = e.exchange == External::Exchange::Values;
  auto refuse = [&](const SourceLoc& at, const char* key, const std::string& why, const std::string& hint) {
    if (!at.given()) return;
    auto& d = r.sink().error("Q170", at, path + "." + key, why);
    d.hint = hint;
  };
  if (!given) {
    std::string x = std::string(External::exchange_name(e.exchange));
    if (e.values) refuse(e.values->loc, "values", "'values' gives the peer's values by hand; exchange " + x + " receives them", "remove values, or write exchange: values");
    refuse(e.values_file_loc, "values_file", "'values_file' is for exchange values; exchange " + x + " receives the peer's values", "remove values_file, or write exchange: values");
    refuse(e.own_values_loc, "own_values", "'own_values' is for exchange values; exchange " + x + " sends qpo's values itself", "remove own_values");
    return;
  }
  for (const auto& [at, key] : {std::pair{e.tool_loc, "tool"}, {e.server_loc, "server"}, {e.listen_loc, "listen"},
                               {e.from_loc, "from"}, {e.port_loc, "port"}, {e.mtu_loc, "mtu"}, {e.rdma_cm_loc, "rdma_cm"}})
    refuse(at, key, std::string("'") + key + "' is a key of the tools' exchanges; with exchange values nothing connects: the peer's values are given",
           std::string("remove ") + key + (std::string(key) == "mtu" ? " (write it in values: {mtu: ...})" : ""));
  if (e.values && !e.values_file.empty()) {
    auto& d = r.sink().error("Q170", e.values_file_loc, path + ".values_file", "both 'values' and 'values_file' give the peer's values");
    d.hint = "keep one of them";
  } else if (!e.values && e.values_file.empty()) {
    auto& d = r.sink().error("Q104", e.loc, path, "external peer '" + e.name + "' (exchange values) needs 'values' or 'values_file'");
    d.rule = "with exchange values nothing connects to the peer: its QP number, PSN, GID (or LID) and buffer are given "
             "in the scenario, or read from a file its setup writes";
    d.hint = "add values: { qpn: 0x11, psn: 0, gid: 10.0.1.2 } or values_file: dut-values.json";
  }
}

// With rdma_cm the QP's `cm:` says the address, the port and who listens: the TCP exchange's
// keys have nothing to say.
void refuse_tcp_keys_with_cm(YamlReader& r, const External& e, const std::string& path) {
  auto refuse = [&](const SourceLoc& at, const char* key, const char* instead) {
    if (!at.given()) return;
    auto& d = r.sink().error("Q170", at, path + "." + key,
                             std::string("'") + key + "' is a key of the tools' TCP exchanges; with exchange rdma_cm " + instead);
    d.hint = std::string("remove ") + key;
  };
  refuse(e.server_loc, "server", "the QP's cm: address says where the tool listens (cm: {role: active, address: ...})");
  refuse(e.listen_loc, "listen", "the QP's cm: role says who listens (cm: {role: passive})");
  refuse(e.port_loc, "port", "the QP's cm: port is the tool's -p");
  refuse(e.mtu_loc, "mtu", "the CM chooses the path MTU");
}

// exchange values: `values: {qpn, psn, lid, gid, qkey, mtu, mr: {addr, rkey, length}}`.
External::GivenValues load_given_values(YamlReader& r, const yaml::Node& v, const std::string& path) {
  External::GivenValues g;
  g.loc = r.loc(v);
  for (auto& [key, value] : fields(r, v, path, keys::given_values(), "the peer's values")) {
    std::string p = join_path(path, key);
    if (key == "qpn") {
      g.qpn_loc = r.loc(value);
      if (auto x = r.uint(value, p, 0xFFFFFF)) g.qpn = static_cast<uint32_t>(*x);
    } else if (key == "psn") {
      if (auto x = r.uint(value, p, 0xFFFFFF)) g.psn = static_cast<uint32_t>(*x);
    } else if (key == "lid") {
      if (auto x = r.uint(value, p, 0xFFFF)) g.lid = static_cast<uint16_t>(*x);
    } else if (key == "qkey") {
      if (auto x = r.uint(value, p, 0xFFFFFFFF)) g.qkey = static_cast<uint32_t>(*x);
    } else if (key == "gid") {
      g.gid_loc = r.loc(value);
      if (auto x = r.string(value, p)) {
        unsigned char raw[16];
        if (inet_pton(AF_INET6, x->c_str(), raw) == 1 || inet_pton(AF_INET, x->c_str(), raw) == 1) {
          g.gid = *x;
        } else {
          auto& d = r.sink().error("Q170", g.gid_loc, p, "'" + util::printable(*x, 64) + "' is not a GID");
          d.rule = "a RoCEv2 GID is an IP address: IPv6 (fe80::1) or IPv4 (10.0.1.2, taken as ::ffff:10.0.1.2)";
        }
      }
    } else if (key == "mtu") {
      if (auto x = r.uint(value, p)) {
        if (*x == 256 || *x == 512 || *x == 1024 || *x == 2048 || *x == 4096) {
          g.mtu = static_cast<uint32_t>(*x);
        } else {
          auto& d = r.sink().error("Q170", r.loc(value), p, "mtu " + std::to_string(*x) + " is not a path MTU");
          d.rule = "enum ibv_mtu: 256, 512, 1024, 2048 or 4096 bytes";
        }
      }
    } else if (key == "mr") {
      g.mr_loc = r.loc(value);
      g.has_mr = true;
      bool addr = false, rkey = false;
      for (auto& [mk, mv] : fields(r, value, p, keys::given_mr(), "the peer's buffer")) {
        std::string mp = join_path(p, mk);
        if (mk == "addr") {
          if (auto x = r.uint(mv, mp)) g.mr_addr = *x, addr = true;
        } else if (mk == "rkey") {
          if (auto x = r.uint(mv, mp, 0xFFFFFFFF)) g.mr_rkey = static_cast<uint32_t>(*x), rkey = true;
        } else if (mk == "length") {
          if (auto x = r.size(mv, mp)) g.mr_length = *x;
        }
      }
      if (!addr || !rkey || g.mr_length == 0) {
        auto& d = r.sink().error("Q104", g.mr_loc, p, "the peer's mr needs addr, rkey and length");
        d.rule = "qpo's RDMA WRITEs and READs aim at [addr, addr + length) with rkey";
        d.hint = "write mr: { addr: 0x7f0000000000, rkey: 0x1234, length: 65536 }";
      }
    }
  }
  if (!g.qpn_loc.given()) {
    auto& d = r.sink().error("Q104", g.loc, path, "the peer's values need 'qpn'");
    d.hint = "add qpn: the peer QP's number (dest_qp_num at RTR)";
  }
  return g;
}

}  // namespace

// `externals:` a peer outside the scenario, reached through a stock tool's own exchange.
void load_externals(YamlReader& r, const yaml::Node& n, Scenario& s) {
  for_each_named(r, n, "externals", [&](const std::string& name, SourceLoc loc, const std::string& path, const yaml::Node& v) {
    if (!check_unique(r, s.external(name), name, loc, path)) return;
    External e;
    e.name = name;
    e.loc = loc;
    bool has_exchange = false;
    for (auto& [key, value] : fields(r, v, path, keys::external(), "an external peer")) {
      std::string p = join_path(path, key);
      if (key == "exchange") {
        e.exchange_loc = r.loc(value);
        if (auto x = r.string(value, p)) {
          for (const auto& [kind, spelling] : External::kExchangeNames)
            if (*x == spelling) e.exchange = kind, has_exchange = true;
          if (!has_exchange) {
            auto& d = r.sink().error("Q170", e.exchange_loc, p, "unknown exchange '" + *x + "'");
            d.rule = "qpo speaks these tools' out-of-band exchanges: ibv_pingpong (ibv_rc_pingpong's and "
                     "ibv_ud_pingpong's TCP exchange of LID:QPN:PSN:GID), perftest (ib_write_bw, ib_read_bw, "
                     "ib_send_bw, ib_send_lat, ib_write_lat; with rdma_cm: true their -R), rdma_cm (the connection manager: ucmatose, "
                     "rdma_server, rdma_client, udaddy, rping)";
            d.hint = "write exchange: ibv_pingpong, exchange: perftest or exchange: rdma_cm";
          }
        }
      } else if (key == "tool") {
        e.tool_loc = r.loc(value);
        if (auto x = r.string(value, p)) e.tool = *x;  // known to the exchange? checked below, once it is read
      } else if (key == "server") {
        e.server_loc = r.loc(value);
        if (auto x = r.string(value, p)) e.server = *x;
      } else if (key == "from") {
        e.from_loc = r.loc(value);
        if (auto x = r.string(value, p)) e.from = *x;
      } else if (key == "listen") {
        e.listen_loc = r.loc(value);
        if (auto b = r.boolean(value, p)) e.listen = *b;
      } else if (key == "port") {
        e.port_loc = r.loc(value);
        if (auto x = r.uint(value, p, 65535)) {
          if (*x == 0) {
            auto& d = r.sink().error("Q170", r.loc(value), p, "port 0 is not a TCP port the tool can use");
            d.hint = "give the tool's -p (its default is 18515)";
          } else {
            e.port = static_cast<uint16_t>(*x);
          }
        }
      } else if (key == "values") {
        e.values = load_given_values(r, value, p);
      } else if (key == "values_file") {
        e.values_file_loc = r.loc(value);
        if (auto x = r.string(value, p)) e.values_file = *x;
      } else if (key == "own_values") {
        e.own_values_loc = r.loc(value);
        if (auto x = r.string(value, p)) e.own_values = *x;
      } else if (key == "rdma_cm") {
        e.rdma_cm_loc = r.loc(value);
        if (auto b = r.boolean(value, p)) e.rdma_cm = *b;
      } else if (key == "mtu") {
        e.mtu_loc = r.loc(value);
        if (auto x = r.uint(value, p)) {
          if (*x == 256 || *x == 512 || *x == 1024 || *x == 2048 || *x == 4096) {
            e.mtu = static_cast<uint32_t>(*x);
          } else {
            auto& d = r.sink().error("Q170", e.mtu_loc, p, "mtu " + std::to_string(*x) + " is not a path MTU");
            d.rule = "enum ibv_mtu: 256, 512, 1024, 2048 or 4096 bytes (the tool's -m)";
          }
        }
      }
    }
    if (!has_exchange && !e.exchange_loc.given()) {
      auto& d = r.sink().error("Q104", loc, path, "external peer '" + name + "' needs 'exchange'");
      d.hint = "add 'exchange: ibv_pingpong', 'exchange: perftest' (the tool's own out-of-band exchange) or 'exchange: rdma_cm'";
    }
    if (!e.from.empty() && !e.listen && e.exchange != External::Exchange::RdmaCm) {
      auto& d = r.sink().error("Q170", e.from_loc, path + ".from",
                               "'from' limits who may connect to qpo; external peer '" + name + "' does not listen");
      d.hint = "remove from, or write listen: true instead of server:";
    }
    check_external_tool(r, e, path);
    if (e.rdma_cm && e.exchange != External::Exchange::Perftest) {
      auto& d = r.sink().error("Q170", e.rdma_cm_loc, path + ".rdma_cm",
                               "'rdma_cm' is perftest's -R; external peer '" + name + "' has exchange " +
                                   std::string(External::exchange_name(e.exchange)));
      d.rule = "with exchange perftest, rdma_cm: true is the tool's -R: its exchange and its test QP connect through rdma_cm; "
               "exchange rdma_cm is the connection manager alone (rdmacm-utils' tools)";
      d.hint = e.exchange == External::Exchange::RdmaCm ? "remove rdma_cm (exchange rdma_cm says it already)"
                                                        : "remove rdma_cm, or write exchange: perftest";
      e.rdma_cm = false;
    }
    check_values_keys(r, e, path);
    if (e.exchange == External::Exchange::RdmaCm) {
      refuse_tcp_keys_with_cm(r, e, path);
    } else if (e.exchange == External::Exchange::Values) {
      // no tool, no connection: the values are given
    } else if (e.server.empty() == !e.listen) {
      auto& d = r.sink().error("Q170", loc, path,
                               "external peer '" + name + "' needs exactly one of 'server' and 'listen: true'");
      d.rule = "one side of the tool's TCP exchange listens: 'server: ADDRESS' when the tool does (qpo "
               "connects to it), 'listen: true' when qpo does (the tool connects to qpo)";
      d.hint = "e.g. 'server: 10.0.1.2' for a tool started as 'ibv_rc_pingpong -g 1' on that host";
    }
    s.externals.push_back(std::move(e));
  });
}

void finish_mws(Scenario& s) {
  for (auto& w : s.mws) {
    const Mr* m = s.mr(w.mr.name);
    if (!m) continue;
    if (!w.pd) w.pd = m->pd;
    if (!w.length_loc.given() && w.offset < m->size) w.length = m->size - w.offset;
  }
}

int errno_from_name(std::string_view name) { return util::errno_from_symbol(name); }

std::vector<std::string> known_errno_names() { return util::errno_symbols(); }

}  // namespace qpo::scenario::detail
