// QPs brought to RTS per second, qpo against the hand-written C loop (rts_loop_core.c), both
// in this one process, alternating round by round. The companion of bench/qp_rate.sh: that
// one times whole `qpo run` processes; this one keeps everything else equal - one process,
// its code translated once by the lab's emulator, and the two windows measured milliseconds
// apart so a burst of host load (the lab guest's vCPU is a host thread that the host's own
// hypervisor also steals from) lands on both.
//   qpo_bench_qp_rate_inproc DEVICE GID_INDEX PAIRS ROUNDS [CQ_DEPTH]   (both sides' CQ, 4096)
// Round 0 of each side is a warm-up and is not counted. Prints each round, the median of the
// per-round ratios qpo/C, the ratio of the medians and of the best rounds. Target: >= 0.95.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "check/validate.h"
#include "exec/executor.h"
#include "plan/plan.h"
#include "rts_loop_core.h"
#include "scenario/loader.h"

namespace {

// The verbs rts_loop_core.c makes, as a scenario (the same text as bench/qp_rate.sh's).
std::string scenario_text(const std::string& device, int gid_index, int pairs, int cq_depth) {
  std::string p = std::to_string(pairs);
  std::string qp = "count: " + p + ", pd: d, type: RC, send_cq: c, recv_cq: c, cap: { max_send_wr: 16, max_recv_wr: 0 },"
                   " states: { INIT: { qp_access_flags: [remote_write] }, RTR: {}, RTS: { sq_psn: 0x1234 } }";
  return "version: 1\nname: qp-rate-" + p + "-pairs\n" +
         "devices: { d: { name: " + device + ", port: 1, gid_index: " + std::to_string(gid_index) + " } }\n" +
         "cqs: { c: { device: d, depth: " + std::to_string(cq_depth) + " } }\n" +
         "qps:\n  qa: { connect: qb, " + qp + " }\n  qb: { connect: qa, " + qp + " }\n";
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[(v.size() - 1) / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5 && argc != 6) {
    std::fprintf(stderr, "usage: qpo_bench_qp_rate_inproc DEVICE GID_INDEX PAIRS ROUNDS [CQ_DEPTH]\n");
    return 2;
  }
  std::string device = argv[1];
  int gid_index = std::atoi(argv[2]), pairs = std::atoi(argv[3]), rounds = std::atoi(argv[4]);
  int cq_depth = argc == 6 ? std::atoi(argv[5]) : RTS_LOOP_CQ_DEPTH;
  if (pairs < 1 || rounds < 1 || cq_depth < 1) {
    std::fprintf(stderr, "qp_rate_inproc: PAIRS, ROUNDS and CQ_DEPTH must be >= 1\n");
    return 2;
  }
  qpo::util::SourceText src("qp-rate.yaml", scenario_text(device, gid_index, pairs, cq_depth));
  qpo::diag::DiagSink sink;
  auto s = qpo::scenario::load_scenario(src, sink);
  std::optional<qpo::check::Checked> checked;
  if (s) checked = qpo::check::validate(*s, sink);
  if (!s || sink.has_errors()) {
    std::fprintf(stderr, "qp_rate_inproc: the generated scenario is invalid\n");
    return 2;
  }
  auto plan = qpo::plan::build_plan(*checked);
  qpo::exec::RunOptions o;
  o.smoke = false;
  int qps = 2 * pairs;

  // One round: both sides, the first one alternating. Returns false when qpo's run failed.
  auto round = [&](int r, double* c_rate, double* q_rate) {
    auto run_c = [&] { *c_rate = qps / rts_loop_run(device.c_str(), gid_index, pairs, cq_depth); };
    auto run_q = [&] {
      auto rep = qpo::exec::run_scenario(plan, o);
      if (rep.verdict != qpo::report::Verdict::Pass || rep.qps_at_rts != static_cast<size_t>(qps) ||
          rep.bringup_seconds <= 0) {
        std::fprintf(stderr, "qp_rate_inproc: qpo's run did not bring %d QPs up: %s\n", qps, rep.reason.c_str());
        return false;
      }
      *q_rate = qps / rep.bringup_seconds;
      return true;
    };
    if (r % 2 == 0) {
      run_c();
      return run_q();
    }
    if (!run_q()) return false;
    run_c();
    return true;
  };

  double c = 0, q = 0;
  if (!round(0, &c, &q)) return 1;  // warm-up
  std::vector<double> cs, qs, ratios;
  for (int r = 1; r <= rounds; ++r) {
    if (!round(r, &c, &q)) return 1;
    cs.push_back(c);
    qs.push_back(q);
    ratios.push_back(q / c);
    std::printf("inproc round %d: C loop %.1f QPs/s, qpo %.1f QPs/s, qpo/C %.3f\n", r, c, q, q / c);
  }
  double cb = *std::max_element(cs.begin(), cs.end()), qb = *std::max_element(qs.begin(), qs.end());
  std::printf("inproc: median QPs to RTS per second (%d QPs, %d rounds): C loop %.1f, qpo %.1f, ratio qpo/C %.3f\n", qps,
              rounds, median(cs), median(qs), median(qs) / median(cs));
  std::printf("inproc: median of the per-round ratios qpo/C %.3f; best rounds: C %.1f, qpo %.1f, ratio %.3f\n",
              median(ratios), cb, qb, qb / cb);
  return 0;
}
