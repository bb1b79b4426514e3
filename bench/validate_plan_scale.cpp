// validate + plan time for generated scenarios of 1,000 and 10,000 QPs, in one process,
// and the 10k/1k ratio (target: 10k under 0.3 s, ratio ~10 = linear). Two shapes:
//   compact - `count: N` templates (how a 10k-QP experiment is written)
//   verbose - every QP written out with full states (5.6 MB of YAML at 10k QPs)
// Each phase is timed on its own: YAML parse + model (load), validate, plan build, plan JSON.
#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "check/validate.h"
#include "plan/plan.h"
#include "scenario/loader.h"

namespace {

using Clock = std::chrono::steady_clock;

// CPU time of this process (user + system), in ms: on a shared machine wall time also counts
// the time other processes held the core; the CPU time is what the work itself cost.
double cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

const char* kQpBody =
    "    pd: da\n    type: RC\n    send_cq: ca\n    recv_cq: ca\n    cap: { max_send_wr: 16, max_recv_wr: 16 }\n"
    "    states:\n      INIT: { pkey_index: 0, port_num: 1, qp_access_flags: [remote_write, remote_read] }\n"
    "      RTR:  { path_mtu: auto, dest_qp_num: peer, rq_psn: peer, max_dest_rd_atomic: 1, min_rnr_timer: 12 }\n"
    "      RTS:  { sq_psn: random, timeout: 14, retry_cnt: 7, rnr_retry: 7, max_rd_atomic: 1 }\n";

std::string header(size_t qps) {
  return "version: 1\nname: scale-" + std::to_string(qps) +
         "\ndevices: { da: { name: auto } }\ncqs: { ca: { device: da, depth: " + std::to_string(qps * 32) + " } }\nqps:\n";
}

std::string compact(size_t qps) {
  std::string s = header(qps);
  for (const char* side : {"a", "b"}) {
    s += std::string("  q") + side + ":\n    count: " + std::to_string(qps / 2) + "\n    connect: q" +
         (side[0] == 'a' ? "b" : "a") + "\n" + kQpBody;
  }
  return s;
}

std::string verbose(size_t qps) {
  std::string s = header(qps);
  for (size_t i = 0; i < qps / 2; ++i)
    for (const char* side : {"a", "b"})
      s += "  q" + std::to_string(i) + side + ":\n    connect: q" + std::to_string(i) + (side[0] == 'a' ? "b" : "a") +
           "\n" + kQpBody;
  return s;
}

struct Times {
  double load = 0, validate = 0, plan = 0, json = 0;
  double cpu = 0;  // load + validate + plan, CPU ms
  double total() const { return load + validate + plan; }
  double median = 0, worst = 0;  // of every run's cpu (the best run is `cpu`)
};

Times measure(const std::string& text, int runs) {
  Times best{1e9, 1e9, 1e9, 1e9};
  std::vector<double> cpus;
  for (int r = 0; r < runs; ++r) {
    Times t;
    qpo::util::SourceText src("bench.yaml", text);
    qpo::diag::DiagSink sink;
    double c0 = cpu_ms();
    auto t0 = Clock::now();
    auto s = qpo::scenario::load_scenario(src, sink);
    auto t1 = Clock::now();
    auto checked = qpo::check::validate(std::move(*s), sink);  // as qpo does: no copy
    auto t2 = Clock::now();
    auto p = qpo::plan::build_plan(checked);
    auto t3 = Clock::now();
    double c1 = cpu_ms();
    if (r == 0) {  // the JSON once: at 100,000 QPs it takes longer than the rest
      qpo::util::JsonWriter w;
      qpo::plan::render_json(w, p);
    }
    auto t4 = Clock::now();
    if (sink.has_errors()) {
      std::fprintf(stderr, "generated scenario is invalid\n");
      std::exit(2);
    }
    auto ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
    t = {ms(t0, t1), ms(t1, t2), ms(t2, t3), ms(t3, t4), c1 - c0};
    cpus.push_back(t.cpu);
    if (r == 0) best.json = t.json;
    if (t.cpu < best.cpu || r == 0) best = {t.load, t.validate, t.plan, best.json, t.cpu};
  }
  std::sort(cpus.begin(), cpus.end());
  best.median = cpus[cpus.size() / 2];
  best.worst = cpus.back();
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  int runs = argc > 1 ? std::atoi(argv[1]) : 3;
  std::printf("best of %d runs by CPU time; wall = load + validate + plan; cpu = the same in CPU time (best, median,\n"
              "worst run); json = the first run's plan as JSON\n", runs);
  std::printf("%-8s %7s %9s %8s %11s %8s %9s %9s %9s %9s %10s %8s\n", "shape", "QPs", "bytes", "load ms", "validate ms",
              "plan ms", "wall ms", "cpu ms", "median", "worst", "cpu us/QP", "json ms");
  struct Shape {
    const char* name;
    std::string (*make)(size_t);
    std::vector<size_t> sizes;
  };
  // The hand-written form stops at 10,000: 100,000 QPs written out is 43 MB, past the 16 MiB cap.
  for (const Shape& shape : {Shape{"compact", compact, {1000, 10000, 100000}}, Shape{"verbose", verbose, {1000, 10000}}}) {
    std::vector<Times> all;
    for (size_t qps : shape.sizes) {
      std::string text = shape.make(qps);
      Times t = measure(text, runs);
      std::printf("%-8s %7zu %9zu %8.1f %11.1f %8.1f %9.1f %9.1f %9.1f %9.1f %10.2f %8.1f\n", shape.name, qps, text.size(),
                  t.load, t.validate, t.plan, t.total(), t.cpu, t.median, t.worst, t.cpu * 1000 / static_cast<double>(qps),
                  t.json);
      all.push_back(t);
    }
    std::printf("%-8s 10k/1k cpu ratio %.1fx (linear: 10x)\n", shape.name, all[1].cpu / all[0].cpu);
    // The time targets are the counted form's; the hand-written one is to stay linear.
    if (all.size() > 2) {
      std::printf("%-8s 10k cpu %.0f ms, median %.0f ms (target < 300 ms): %s\n", shape.name, all[1].cpu, all[1].median,
                  all[1].median < 300 ? "met" : "MISSED");
      std::printf("%-8s 100k/10k cpu ratio %.1fx; 100k cpu %.0f ms, median %.0f ms (target < 3000 ms): %s\n", shape.name,
                  all[2].cpu / all[1].cpu, all[2].cpu, all[2].median, all[2].median < 3000 ? "met" : "MISSED");
    }
  }
  return 0;
}
