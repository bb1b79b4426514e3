// qpo's side of bench/perftest_compare.sh: a loopback pair on one device, connected with raw
// verbs (dataplane::Testbed), running one Lua workload the way the executor will
// (lua::run_workload with an initiator and a target worker).
//
//   qpo_bench_lua [--device rxe0] [--gid N] [--type RC|UC|UD] [--mr BYTES]
//                 [--cq-depth N] [--recv-cq-depth N] [--context-per-side] [--old-post-send]
//                 [--warmup] WORKLOAD [key=value...]
//
// Sends go through the extended post API (ibv_wr_*) as in `qpo run` and perftest's default;
// --old-post-send takes ibv_post_send instead (perftest --use_old_post_send).
//
// Each QP gets one CQ of --cq-depth entries (default 8192) for its sends and receives, or with
// --recv-cq-depth a second CQ of that many entries for its receives: perftest's send tests
// (ib_send_bw, ib_send_lat) create their CQs that way (send CQ tx_depth, receive CQ rx_depth).
//
// --warmup runs the workload once, unreported, before the run that is reported: in the lab
// guest the first ~100 ms of a fresh qpo process are more often in the emulator's slow mode
// (docs/lua.md, Performance), so this measures the engine in steady state.
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
  std::fprintf(stderr,
               "usage: qpo_bench_lua [--device D] [--gid N] [--type RC|UC|UD] [--mr BYTES] [--cq-depth N] "
               "[--recv-cq-depth N] [--context-per-side] [--old-post-send] [--warmup] WORKLOAD [key=value...]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string device = "rxe0", type = "RC", workload;
  int gid = -1;
  size_t mr = 16 << 20;
  int cq_depth = 8192, recv_cq_depth = 0;
  bool context_per_side = false, warmup = false, old_post_send = false;
  qpo::dataplane::TestbedQp qp;
  qpo::lua::Value args = qpo::lua::Value::table();
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--device") device = next();
    else if (a == "--gid") gid = std::atoi(next().c_str());
    else if (a == "--type") type = next();
    else if (a == "--mr") mr = std::strtoull(next().c_str(), nullptr, 0);
    else if (a == "--cq-depth") cq_depth = std::atoi(next().c_str());
    else if (a == "--recv-cq-depth") recv_cq_depth = std::atoi(next().c_str());
    else if (a == "--context-per-side") context_per_side = true;
    else if (a == "--warmup") warmup = true;
    else if (a == "--old-post-send") old_post_send = true;
    else if (a == "--max-send-wr") qp.max_send_wr = std::atoi(next().c_str());
    else if (a == "--max-recv-wr") qp.max_recv_wr = std::atoi(next().c_str());
    else if (a == "--max-inline") qp.max_inline = std::atoi(next().c_str());
    else if (a.find('=') != std::string::npos) args[a.substr(0, a.find('='))] = parse_value(a.substr(a.find('=') + 1));
    else if (workload.empty()) workload = a;
    else return usage();
  }
  if (workload.empty() || cq_depth <= 0 || recv_cq_depth < 0) return usage();
  try {
    qpo::dataplane::Testbed tb(device, gid);
    tb.use_old_post_send(old_post_send);
    // Side a's MR, CQs and QP, then side b's: in one device context by default (as `qpo run`
    // has for a loopback pair on one host), or with --context-per-side in a context each (as
    // perftest's two processes, or qpo on two hosts). Separate CQs either way: no routing
    // between the workers.
    for (const char* side : {"a", "b"}) {
      if (context_per_side && side[0] == 'b') tb.new_side();
      std::string s = side;
      tb.add_mr("m" + s, mr);
      tb.add_cq("c" + s, cq_depth);
      if (recv_cq_depth) tb.add_cq("r" + s, recv_cq_depth);
      qp.type = type;
      qp.send_cq = "c" + s;
      qp.recv_cq = (recv_cq_depth ? "r" : "c") + s;
      tb.add_qp(s, qp);
    }
    tb.connect("a", "b");
    args["local_mr"] = "ma";
    args["remote_mr"] = "mb";
    qpo::lua::WorkloadSpec spec;
    spec.name = workload;
    spec.script = workload.find('/') == 0 || workload.ends_with(".lua") ? workload : "builtin:" + workload;
    spec.args = args;
    spec.timeout_ms = 60000;
    spec.workers = {{"a", "initiator", {"a"}}, {"b", "target", {"b"}}};
    if (warmup) {
      auto w = qpo::lua::run_workload(spec, tb.endpoints());
      if (!w.ok) {
        std::fprintf(stderr, "qpo_bench_lua: warm-up: %s\n", w.error.c_str());
        return 1;
      }
    }
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
