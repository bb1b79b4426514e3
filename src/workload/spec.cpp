#include "workload/spec.h"

#include <filesystem>
#include <set>

namespace qpo::workload {

lua::Value to_lua(const scenario::ScriptValue& v) {
  using Kind = scenario::ScriptValue::Kind;
  switch (v.kind) {
    case Kind::Bool: return lua::Value(v.boolean);
    case Kind::Int: return lua::Value(v.integer);
    case Kind::Number: return lua::Value(v.number);
    case Kind::String: return lua::Value(v.text);
    case Kind::List: {
      lua::Value list = lua::Value::table();
      for (const auto& item : v.items) list.push_back(to_lua(item));
      return list;
    }
  }
  return {};
}

std::string script_location(const scenario::Scenario& s, const std::string& script) {
  namespace fs = std::filesystem;
  if (script.rfind("builtin:", 0) == 0 || script.empty() || script[0] == '/') return script;
  fs::path dir = fs::path(s.file).parent_path();
  if (dir.empty()) return script;
  std::error_code ec;
  fs::path beside = dir / script;
  return fs::exists(beside, ec) ? beside.string() : script;
}

namespace {

// "cli.0" for one QP, "cli.0..cli.7" for several.
std::string worker_name(const std::vector<std::string>& qps) {
  return qps.size() == 1 ? qps.front() : qps.front() + ".." + qps.back();
}

// `workers: N`: the initiators in N contiguous shares, one worker each, and their peers
// (the targets) in the same shares: thread count N per side, whatever the QP count.
lua::WorkloadSpec split_workers(const scenario::Scenario& s, const scenario::Workload& w, lua::WorkloadSpec spec) {
  std::vector<std::string> initiators;
  std::set<std::string> named;
  for (const auto& q : w.initiators())
    if (named.insert(q.name).second) initiators.push_back(q.name);
  size_t n = initiators.size(), threads = std::min<size_t>(w.workers, n);
  std::vector<lua::WorkerSpec> targets;
  for (size_t k = 0; k < threads; ++k) {
    std::vector<std::string> mine(initiators.begin() + static_cast<std::ptrdiff_t>(k * n / threads),
                                  initiators.begin() + static_cast<std::ptrdiff_t>((k + 1) * n / threads));
    std::vector<std::string> peers;
    for (const auto& q : mine) {
      const auto* qp = s.qp(q);
      if (qp && qp->connect && named.insert(qp->connect.name).second) peers.push_back(qp->connect.name);
    }
    int64_t cpu = w.pin.empty() ? -1 : w.pin[k % w.pin.size()];
    spec.workers.push_back({worker_name(mine), "initiator", mine, cpu});
    if (!peers.empty()) targets.push_back({worker_name(peers), "target", peers, cpu});
  }
  spec.workers.insert(spec.workers.end(), targets.begin(), targets.end());
  return spec;
}

}  // namespace

lua::WorkloadSpec script_spec(const scenario::Scenario& s, const scenario::Workload& w) {
  lua::WorkloadSpec spec;
  spec.name = w.name;
  spec.script = script_location(s, w.script);
  for (const auto& a : w.args) spec.args[a.key] = to_lua(a.value);
  if (w.size_loc.given()) spec.args["size"] = static_cast<int64_t>(w.size);
  if (w.iterations_loc.given()) spec.args["iterations"] = static_cast<int64_t>(w.iterations);
  if (w.local_mr) spec.args["local_mr"] = w.local_mr.name;
  if (w.remote_mr) spec.args["remote_mr"] = w.remote_mr.name;
  if (w.workers) return split_workers(s, w, std::move(spec));
  std::set<std::string> named;
  for (const auto& q : w.initiators())
    if (named.insert(q.name).second) spec.workers.push_back({q.name, "initiator", {q.name}});
  for (const auto& q : w.initiators()) {
    const auto* qp = s.qp(q.name);
    if (qp && qp->connect && named.insert(qp->connect.name).second)
      spec.workers.push_back({qp->connect.name, "target", {qp->connect.name}});
  }
  return spec;
}

}  // namespace qpo::workload
