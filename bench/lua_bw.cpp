// qpo's side of bench/perftest_compare.sh: a loopback pair on one device, connected with raw
// verbs (dataplane::Testbed), running one Lua workload the way the executor will
// (lua::run_workload with an initiator and a target worker).
//
//   qpo_bench_lua [--device rxe0] [--gid N] [--type RC|UC|UD] [--mr BYTES] WORKLOAD [key=value...]
//
// WORKLOAD is a built-in name (write_bw, examples/write_bw_hook, ...) or a .lua path; the
// key=value pairs are its args (integers, numbers, true/false, else strings). Prints the
// workload's report and one line for scripts:
//   RESULT bw_avg=<MB/s> msg_rate=<Mpps> t_typical=<usec> ...
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "dataplane/testbed.h"
#include "lua/workload.h"

namespace {

qpo::lua::Value parse_value(const std::string& v) {
  if (v == "true") return qpo::lua::Value(true);
  if (v == "false") return qpo::lua::Value(false);
  char* end = nullptr;
  long long i = std::strtoll(v.c_str(), &end, 10);
  if (end && *end == 0 && !v.empty()) return qpo::lua::Value(static_cast<int64_t>(i));
  double d = std::strtod(v.c_str(), &end);
  if (end && *end == 0 && !v.empty()) return qpo::lua::Value(d);
  return qpo::lua::Value(v);
}

int usage() {
  std::fprintf(stderr, "usage: qpo_bench_lua [--device D] [--gid N] [--type RC|UC|UD] [--mr BYTES] WORKLOAD [key=value...]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string device = "rxe0", type = "RC", workload;
  int gid = -1;
  size_t mr = 16 << 20;
  qpo::lua::Value args = qpo::lua::Value::table();
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--device") device = next();
    else if (a == "--gid") gid = std::atoi(next().c_str());
    else if (a == "--type") type = next();
    else if (a == "--mr") mr = std::strtoull(next().c_str(), nullptr, 0);
    else if (a.find('=') != std::string::npos) args[a.substr(0, a.find('='))] = parse_value(a.substr(a.find('=') + 1));
    else if (workload.empty()) workload = a;
    else return usage();
  }
  if (workload.empty()) return usage();
  try {
    qpo::dataplane::Testbed tb(device, gid);
    tb.add_mr("ma", mr);
    tb.add_mr("mb", mr);
    // Separate CQs, as perftest's two processes have: no routing between the workers.
    tb.add_cq("ca", 8192);
    tb.add_cq("cb", 8192);
    tb.add_qp("a", {type, "ca", "ca"});
    tb.add_qp("b", {type, "cb", "cb"});
    tb.connect("a", "b");
    args["local_mr"] = "ma";
    args["remote_mr"] = "mb";
    qpo::lua::WorkloadSpec spec;
    spec.name = workload;
    spec.script = workload.find('/') == 0 || workload.ends_with(".lua") ? workload : "builtin:" + workload;
    spec.args = args;
    spec.timeout_ms = 60000;
    spec.workers = {{"a", "initiator", {"a"}}, {"b", "target", {"b"}}};
    auto r = qpo::lua::run_workload(spec, tb.endpoints());
    if (!r.ok) {
      std::fprintf(stderr, "qpo_bench_lua: %s\n", r.error.c_str());
      return 1;
    }
    std::printf("%s\n", r.summary.string_or("text", "").c_str());
    std::printf("RESULT");
    for (const char* k : {"size", "iterations", "bw_peak", "bw_avg", "msg_rate", "t_min", "t_typical", "t_avg", "p99", "p999",
                          "hook_calls"})
      if (const auto* v = r.summary.find(k)) std::printf(" %s=%.6g", k, v->as_number());
    std::printf("\n");
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "qpo_bench_lua: %s\n", e.what());
    return 2;
  }
}
