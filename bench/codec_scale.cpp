// The control plane's cost per QP on the host (issue 34 item 3): what one host's exchange and
// report lines cost to write, send as text and read back, at a growing number of QPs. The
// figures are microseconds per QP of this process's CPU; flat means the protocol scales
// linearly. The reference is the same work at the smallest count, measured in the same run.
//
//   qpo_bench_codec_scale [QPS...]        default: 1000 10000 20000
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cluster/codec.h"
#include "exec/exchange.h"
#include "report/run_report.h"

namespace {

using Clock = std::chrono::steady_clock;

double micros_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

// One host's part of the exchange as a real run publishes it: each QP, and an MR per QP.
qpo::exec::Directory directory(size_t qps) {
  qpo::exec::Directory d;
  for (size_t i = 0; i < qps; ++i) {
    qpo::exec::RemoteQp q;
    q.host = "a";
    q.type = "RC";
    q.qpn = static_cast<uint32_t>(0x11 + i);
    q.sq_psn = static_cast<uint32_t>(i * 7919 % 0xffffff);
    q.gid[10] = q.gid[11] = 0xff;
    q.gid[12] = 10, q.gid[15] = 1;
    q.active_mtu = 3;
    d.qps[static_cast<uint32_t>(i)] = q;
    d.mrs[{qpo::exec::MrKey::Kind::Mr, static_cast<uint32_t>(i)}] = {"a", 0x7f0000000000 + i * 4096, 64, static_cast<uint32_t>(0x1000 + i)};
  }
  return d;
}

// One host's lines of a run, ~15 per QP as bench/many_qps_hosts.sh's scenario gives them.
qpo::report::RunReport lines(size_t qps) {
  qpo::report::RunReport r;
  r.scenario = "many-qps";
  const char* rows[][3] = {{"setup", "ibv_create_qp", ""},
                           {"setup", "ibv_reg_mr", "size=64"},
                           {"bring-up", "ibv_modify_qp", "RESET->INIT mask=0x39 (IBV_QP_STATE|IBV_QP_PKEY_INDEX|IBV_QP_PORT|IBV_QP_ACCESS_FLAGS)"},
                           {"exchange", "publish", "qpn=0x11 psn=0x1234 gid=::ffff:10.0.1.1"},
                           {"bring-up", "ibv_modify_qp", "INIT->RTR mask=0x1ed81 (IBV_QP_STATE|IBV_QP_AV|IBV_QP_PATH_MTU|IBV_QP_DEST_QPN|IBV_QP_RQ_PSN|IBV_QP_MAX_DEST_RD_ATOMIC|IBV_QP_MIN_RNR_TIMER)"},
                           {"bring-up", "ibv_modify_qp", "RTR->RTS mask=0x72e01 (IBV_QP_STATE|IBV_QP_TIMEOUT|IBV_QP_RETRY_CNT|IBV_QP_RNR_RETRY|IBV_QP_SQ_PSN|IBV_QP_MAX_QP_RD_ATOMIC)"},
                           {"traffic", "prepare", "64 B"},
                           {"traffic", "workload", "rdma_write 64 B x 1"},
                           {"verify", "verify", "64 B"},
                           {"teardown", "ibv_destroy_qp", ""},
                           {"teardown", "ibv_dereg_mr", ""}};
  int step = 0;
  for (size_t i = 0; i < qps; ++i)
    for (const auto& row : rows) {
      qpo::report::StepResult s;
      s.plan_step = ++step;
      s.host = "a";
      s.phase = row[0];
      s.verb = row[1];
      s.object = "cli." + std::to_string(i);
      s.detail = row[2];
      s.micros = 123.5;
      r.steps.push_back(std::move(s));
    }
  return r;
}

struct Cost {
  double write_us = 0, read_us = 0;
  size_t bytes = 0;
};

Cost directory_cost(size_t qps) {
  auto d = directory(qps);
  Cost c;
  auto t0 = Clock::now();
  qpo::util::JsonWriter w(false);
  w.begin_object().field("type", "exchange").field("seq", 1).field("ok", true).key("directory");
  qpo::cluster::write_directory(w, d);
  w.end_object();
  std::string text = w.str();
  c.write_us = micros_since(t0);
  c.bytes = text.size();
  t0 = Clock::now();
  std::string err;
  auto n = qpo::cluster::parse_message(text, &err);
  if (!n) std::abort();
  auto back = qpo::cluster::read_directory(qpo::cluster::member(*n, "directory"));
  c.read_us = micros_since(t0);
  if (back.qps.size() != qps) std::abort();
  return c;
}

Cost lines_cost(size_t qps) {
  auto r = lines(qps);
  Cost c;
  auto t0 = Clock::now();
  std::string text = "{\"type\":\"lines\",\"report\":" + qpo::cluster::report_json(r) + "}";
  c.write_us = micros_since(t0);
  c.bytes = text.size();
  t0 = Clock::now();
  std::string err;
  auto n = qpo::cluster::parse_message(text, &err);
  if (!n) {
    std::fprintf(stderr, "%s\n", err.c_str());
    std::abort();
  }
  auto back = qpo::cluster::read_report(qpo::cluster::member(*n, "report"));
  c.read_us = micros_since(t0);
  if (back.steps.size() != r.steps.size()) std::abort();
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<size_t> counts;
  for (int i = 1; i < argc; ++i) counts.push_back(std::strtoul(argv[i], nullptr, 10));
  if (counts.empty()) counts = {1000, 10000, 20000};
  std::printf("%8s | %-34s | %-34s\n", "QPs", "directory: bytes/QP write read us/QP", "lines: bytes/QP write read us/QP");
  double ref_dir = 0, ref_lines = 0;
  for (size_t n : counts) {
    Cost d = directory_cost(n), l = lines_cost(n);
    double dir_us = (d.write_us + d.read_us) / n, lines_us = (l.write_us + l.read_us) / n;
    if (ref_dir == 0) ref_dir = dir_us, ref_lines = lines_us;
    std::printf("%8zu | %8.0f %8.2f %8.2f (x%.2f) | %8.0f %8.2f %8.2f (x%.2f)\n", n, double(d.bytes) / n, d.write_us / n,
                d.read_us / n, dir_us / ref_dir, double(l.bytes) / n, l.write_us / n, l.read_us / n, lines_us / ref_lines);
  }
  std::printf("(x: per-QP cost over the first count's, write + read; 1.00 is flat)\n");
  return 0;
}
