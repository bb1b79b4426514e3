// An op workload on a QP group reports its members together (exec::group_summary): the bytes
// of all members over the longest member's time, not the sum of their bandwidths, and the
// latency figures from every member's work requests.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "dataplane/stream.h"
#include "exec/workload_results.h"
#include "report/run_report.h"
#include "util/json_writer.h"

namespace {

qpo::report::Scalar field(const qpo::report::Fields& f, const std::string& k) {
  for (const auto& [name, v] : f)
    if (name == k) return v;
  FAIL("no field " << k);
  return {};
}

}  // namespace

TEST_CASE("a group's bandwidth is every member's bytes over the longest member's time") {
  std::vector<double> a{10, 20}, b{30, 40, 50, 60};
  // 1 MiB writes: 2 in 1 s and 4 in 2 s, at the same time: 6 MiB in 2 s = 3 MB/s (MB = 2^20).
  // Summing the members' own bandwidths (2 + 2) would say 4.
  auto f = qpo::exec::group_summary(1048576, {{2, 1.0, &a}, {4, 2.0, &b}});
  CHECK(std::get<int64_t>(field(f, "iterations")) == 6);
  CHECK(std::get<int64_t>(field(f, "bytes")) == 6 * 1048576);
  CHECK(std::get<double>(field(f, "seconds")) == 2.0);
  CHECK(std::get<double>(field(f, "bw_avg")) == doctest::Approx(3.0));
  CHECK(std::get<double>(field(f, "msg_rate")) == doctest::Approx(3e-6));
  CHECK(std::get<int64_t>(field(f, "qps")) == 2);
}

TEST_CASE("a group's latency figures come from every member's samples") {
  std::vector<double> a{10, 20}, b{30, 40, 50, 60};
  auto f = qpo::exec::group_summary(64, {{2, 1.0, &a}, {4, 1.0, &b}});
  CHECK(std::get<double>(field(f, "t_min")) == 10);
  CHECK(std::get<double>(field(f, "t_max")) == 60);
  CHECK(std::get<double>(field(f, "t_avg")) == doctest::Approx(35.0));
}

TEST_CASE("JSON marks a group's results with the group and whether they are the aggregate") {
  qpo::report::RunReport r;
  qpo::report::StepResult member, all;
  auto m = std::make_shared<qpo::report::WorkloadResult>();
  m->name = "write.0";
  m->group = "write";
  auto g = std::make_shared<qpo::report::WorkloadResult>();
  g->name = "write";
  g->group = "write";
  g->aggregate = true;
  member.workload = m;
  all.workload = g;
  r.add(member);
  r.add(all);
  qpo::util::JsonWriter w(false);
  qpo::report::render_json(w, r);
  std::string json = w.str();
  CHECK(json.find(R"("name":"write.0")") != std::string::npos);
  CHECK(json.find(R"("group":"write","aggregate":false)") != std::string::npos);
  CHECK(json.find(R"("group":"write","aggregate":true)") != std::string::npos);
}

TEST_CASE("a group's line takes its figures from the same run as its summary, not read back by key") {
  std::vector<double> a{10, 20}, b{30, 40, 50, 60};
  qpo::dataplane::BandwidthStats together;
  auto f = qpo::exec::group_summary(1048576, {{2, 1.0, &a}, {4, 2.0, &b}}, &together);
  CHECK(together.ops == 6);
  CHECK(together.bytes == 6u * 1048576);
  CHECK(together.seconds == 2.0);
  CHECK(static_cast<int64_t>(together.bytes) == std::get<int64_t>(field(f, "bytes")));
}

TEST_CASE("the peak of timelines together is their best bucket added up, not the sum of their peaks") {
  // Two workers' 10 ms buckets on one clock: 2, 2, 1 MiB from bucket 100; 1, 1, 2 MiB from 101.
  // Together 2, 3, 2, 2 MiB: the best bucket holds 3 MiB, 300 MB/s (their own peaks sum to 400).
  const uint64_t MiB = 1048576;
  qpo::dataplane::StreamTimeline a, b;
  a.first = 100;
  a.bytes = {2 * MiB, 2 * MiB, MiB};
  b.first = 101;
  b.bytes = {MiB, MiB, 2 * MiB};
  const qpo::dataplane::StreamTimeline* both[] = {&a, &b};
  CHECK(qpo::dataplane::timeline_peak(both) == doctest::Approx(300));
  const qpo::dataplane::StreamTimeline* one[] = {&a};
  CHECK(qpo::dataplane::timeline_peak(one) == doctest::Approx(200));
  const qpo::dataplane::StreamTimeline* none[] = {nullptr};
  CHECK(qpo::dataplane::timeline_peak(none) == 0);  // not measured
}

TEST_CASE("an op workload's summary lists bw_peak beside bw_avg, never below it, and none when not measured") {
  std::vector<double> none;
  // 100 x 1 MiB in 2 s: 50 MB/s on average.
  auto measured = qpo::exec::op_summary(1048576, 100, 2.0, none, 80);
  CHECK(std::get<double>(field(measured, "bw_peak")) == doctest::Approx(80));
  CHECK(std::get<double>(field(measured, "bw_avg")) == doctest::Approx(50));
  auto short_run = qpo::exec::op_summary(1048576, 100, 2.0, none, 30);  // a run shorter than its buckets
  CHECK(std::get<double>(field(short_run, "bw_peak")) == doctest::Approx(50));
  auto unmeasured = qpo::exec::op_summary(1048576, 100, 2.0, none);
  for (const auto& f : unmeasured) CHECK(f.first != "bw_peak");
  std::vector<std::string> names;
  for (const auto& [name, v] : measured) names.push_back(name);
  CHECK(names == std::vector<std::string>{"size", "iterations", "bytes", "seconds", "bw_peak", "bw_avg", "msg_rate"});
}
