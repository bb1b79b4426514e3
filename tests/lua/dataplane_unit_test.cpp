// The data path's device-free parts: names, ops, patterns, statistics, and the request checks
// that must fail before any verbs call.
#include <doctest/doctest.h>

#include <vector>

#include "dataplane/error.h"
#include "dataplane/names.h"
#include "dataplane/op.h"
#include "dataplane/pattern.h"
#include "dataplane/post.h"
#include "dataplane/stats.h"
#include "dataplane/stream.h"

using namespace qpo::dataplane;

TEST_CASE("completion status names round-trip through the table") {
  CHECK(std::string(wc_status_name(IBV_WC_REM_ACCESS_ERR)) == "IBV_WC_REM_ACCESS_ERR");
  CHECK(std::string(wc_status_name(IBV_WC_SUCCESS)) == "IBV_WC_SUCCESS");
  CHECK(std::string(wc_status_name(9999)) == "IBV_WC_UNKNOWN");
  CHECK(parse_wc_status("IBV_WC_RETRY_EXC_ERR") == IBV_WC_RETRY_EXC_ERR);
  CHECK(parse_wc_status("rem_access_err") == IBV_WC_REM_ACCESS_ERR);
  CHECK_FALSE(parse_wc_status("IBV_WC_NOPE").has_value());
  CHECK(std::string(wc_opcode_name(IBV_WC_RDMA_READ)) == "IBV_WC_RDMA_READ");
}

TEST_CASE("ops parse in short, scenario and verbs spellings") {
  CHECK(parse_op("write") == Op::Write);
  CHECK(parse_op("rdma_write") == Op::Write);
  CHECK(parse_op("IBV_WR_RDMA_WRITE") == Op::Write);
  CHECK(parse_op("atomic_fetch_add") == Op::FetchAdd);
  CHECK(parse_op("cas") == Op::CmpSwap);
  CHECK(parse_op("send_with_imm") == Op::SendImm);
  CHECK_FALSE(parse_op("writ").has_value());
  CHECK(op_info(Op::Read).remote);
  CHECK(op_info(Op::FetchAdd).atomic);
  CHECK(op_info(Op::SendImm).consumes_recv);
  CHECK_FALSE(op_info(Op::Write).consumes_recv);
}

TEST_CASE("patterns depend on seed and position; slices check on their own") {
  std::vector<uint8_t> a(1000), b(1000);
  fill_pattern(a.data(), a.size(), 7);
  fill_pattern(b.data(), b.size(), 8);
  CHECK(a != b);
  CHECK(check_pattern(a.data(), a.size(), 7) == -1);
  CHECK(check_pattern(a.data(), a.size(), 8) >= 0);
  // A slice starting at an odd offset matches the pattern at that offset.
  CHECK(check_pattern(a.data() + 13, 500, 7, 13) == -1);
  CHECK(check_pattern(a.data() + 13, 500, 7, 0) >= 0);
  a[777] ^= 1;
  CHECK(check_pattern(a.data(), a.size(), 7) == 777);
  CHECK(pattern_byte(7, 5) == a[5]);
  // Shifted data (landed at the wrong offset) does not match.
  std::vector<uint8_t> c(1008);
  fill_pattern(c.data(), c.size(), 7);
  CHECK(check_pattern(c.data() + 8, 1000, 7) >= 0);
}

TEST_CASE("latency statistics follow perftest's conventions") {
  std::vector<double> us;
  for (int i = 1000; i >= 1; --i) us.push_back(i);
  LatencyStats s = latency_stats(us);
  CHECK(s.samples == 1000);
  CHECK(s.t_min == 1);
  CHECK(s.t_max == 1000);
  CHECK(s.t_typical == 501);  // index n/2 of the sorted samples
  CHECK(s.t_avg == doctest::Approx(500.5));
  CHECK(s.p99 == 991);        // index floor(0.99 n)
  CHECK(s.p999 == 1000);
  CHECK(s.t_stdev == doctest::Approx(288.67).epsilon(0.01));
  std::vector<double> none;
  CHECK(latency_stats(none).samples == 0);
}

TEST_CASE("latency spread: the share of samples above twice the median") {
  std::vector<double> us(94, 40.0);
  for (int i = 0; i < 6; ++i) us.push_back(81.0);  // 6 of 100 above 2 x 40
  LatencyStats s = latency_stats(us);
  CHECK(s.far_from_median == doctest::Approx(0.06));
  CHECK(s.bimodal_share == 0);  // 81/40 is no 4x gap
}

TEST_CASE("latency spread: two clusters 4x apart are bimodal, with the share above the gap") {
  // 80 iterations near 40 us, 20 near 4 ms: a busy TCG host (README "Measurement quality").
  std::vector<double> us;
  for (int i = 0; i < 80; ++i) us.push_back(40.0 + i * 0.1);
  for (int i = 0; i < 20; ++i) us.push_back(4000.0 + i);
  LatencyStats s = latency_stats(us);
  CHECK(s.bimodal_share == doctest::Approx(0.20));
  CHECK(s.far_from_median == doctest::Approx(0.20));
}

TEST_CASE("latency spread: a lone outlier in the top 2% is not a second cluster") {
  std::vector<double> us(99, 40.0);
  us.push_back(40000.0);
  CHECK(latency_stats(us).bimodal_share == 0);
  std::vector<double> few = {40, 41, 4000};  // under 50 samples: no verdict on clusters
  CHECK(latency_stats(few).bimodal_share == 0);
}

TEST_CASE("latency spread: a short run's cold first iteration is no spread") {
  std::vector<double> us(9, 40.0);
  us.push_back(400.0);  // 10% above twice the median, but only 10 samples
  CHECK(latency_stats(us).far_from_median == 0);
}

TEST_CASE("peak: the best per-op time over any window") {
  // Ops posted every 10 ticks, each completing 100 ticks later, except a fast middle stretch.
  std::vector<uint64_t> p, c;
  for (uint64_t i = 0; i < 100; ++i) {
    p.push_back(i * 10);
    c.push_back(i * 10 + 100);
  }
  double t = peak_ticks_per_op(p, c);
  CHECK(t == doctest::Approx((990.0 + 100.0 - 0.0) / 100.0));
  CHECK(peak_ticks_per_op({}, {}) == 0);
}

TEST_CASE("requests are checked against the endpoint before any verbs call") {
  Endpoint ep;
  ep.qp_name = "qa";
  ep.qp_type = IBV_QPT_RC;
  ep.type_name = "RC";
  ep.max_inline_data = 64;
  ibv_mr fake{};
  fake.lkey = 1;
  std::vector<uint8_t> mem(4096);
  ep.local_mrs["ma"] = {&fake, mem.data(), mem.size()};
  ep.remote_mrs["mb"] = {0x10000, 42, 4096};

  SendRequest r;
  r.op = Op::Write;
  r.num_sge = 1;
  r.sge[0] = {&ep.local_mrs["ma"], 0, 4096};
  r.remote = &ep.remote_mrs["mb"];
  CHECK(check_send(ep, r) == "");
  r.sge[0].offset = 1;
  CHECK(check_send(ep, r).find("outside MR 'ma'") != std::string::npos);
  r.sge[0] = {&ep.local_mrs["ma"], 0, 100};
  r.remote_offset = 4000;
  CHECK(check_send(ep, r).find("outside remote MR 'mb'") != std::string::npos);
  r.remote_offset = 0;
  r.inline_data = true;
  CHECK(check_send(ep, r).find("max_inline_data 64") != std::string::npos);
  r.inline_data = false;
  r.op = Op::FetchAdd;
  CHECK(check_send(ep, r).find("exactly 8 bytes") != std::string::npos);
  r.sge[0].length = 8;
  CHECK(check_send(ep, r) == "");
  r.remote_offset = 4;
  CHECK(check_send(ep, r).find("8-byte aligned") != std::string::npos);
  ep.qp_type = IBV_QPT_UD;
  ep.type_name = "UD";
  r.op = Op::Send;
  CHECK(check_send(ep, r).find("address handle") != std::string::npos);
  r.op = Op::Read;
  CHECK(check_send(ep, r).find("RC") != std::string::npos);

  // No verbs QP: a usage error naming the QP, nothing posted.
  ep.qp_type = IBV_QPT_RC;
  ep.type_name = "RC";
  r.op = Op::Write;
  r.remote_offset = 0;
  try {
    post_sends(ep, std::span<const SendRequest>(&r, 1));
    FAIL("expected an error");
  } catch (const DataplaneError& e) {
    CHECK(e.kind() == DataplaneError::Kind::Usage);
    CHECK(e.qp() == "qa");
  }
  CHECK_THROWS_WITH_AS(local_mr(ep, "nope"), doctest::Contains("no local MR 'nope'"), DataplaneError);
  CHECK_THROWS_WITH_AS(remote_mr(ep, "nope"), doctest::Contains("has: mb"), DataplaneError);
}

TEST_CASE("a send with invalidate carries its rkey in the work request, on RC only") {
  Endpoint ep;
  ep.qp_name = "qa";
  ep.qp_type = IBV_QPT_RC;
  ep.type_name = "RC";
  ibv_mr fake{};
  fake.lkey = 7;
  std::vector<uint8_t> mem(256);
  ep.local_mrs["ma"] = {&fake, mem.data(), mem.size()};
  SendRequest r;
  r.op = Op::SendInv;
  r.num_sge = 1;
  r.sge[0] = {&ep.local_mrs["ma"], 0, 64};
  r.invalidate_rkey = 0x1234ab;
  r.imm = 0x51504f;  // not sent: imm_data and invalidate_rkey share the work request's union
  CHECK(check_send(ep, r) == "");
  ibv_send_wr wr{};
  ibv_sge sges[kMaxSge];
  to_verbs(ep, r, wr, sges);
  CHECK(wr.opcode == IBV_WR_SEND_WITH_INV);
  CHECK(wr.invalidate_rkey == 0x1234abu);
  ep.qp_type = IBV_QPT_UC;
  ep.type_name = "UC";
  CHECK(check_send(ep, r) == "send with invalidate needs an RC or XRC QP (this one is UC)");
}

TEST_CASE("stream configuration errors name the QP") {
  Endpoint ep;
  ep.qp_name = "qa";
  StreamLane lane{&ep, nullptr};
  StreamConfig cfg;
  CHECK_THROWS_WITH_AS(run_stream(std::span<const StreamLane>(&lane, 1), cfg), doctest::Contains("'qa'"),
                       DataplaneError);
  CHECK_THROWS_AS(run_stream(std::span<const StreamLane>(), cfg), DataplaneError);
}
