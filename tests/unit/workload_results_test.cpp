// A script workload's summary in the report: thresholds judged against it (the verdict's
// message names the field, the measured value and the limit), the structured results, and
// how the text and JSON reports show them. One behaviour per test case.
#include <doctest/doctest.h>

#include "exec/workload_results.h"
#include "report/run_report.h"
#include "util/json_writer.h"

using qpo::lua::Value;

namespace {

qpo::util::Threshold min_bw(double mb_per_s) {
  qpo::util::Threshold t;
  t.name = "min_bw";
  t.field = "bw_avg";
  t.minimum = true;
  t.limit = mb_per_s;
  t.unit = "MB/s";
  return t;
}

qpo::util::Threshold max_p99(double usec) {
  qpo::util::Threshold t;
  t.name = "max_p99";
  t.field = "p99";
  t.minimum = false;
  t.limit = usec;
  t.unit = "usec";
  return t;
}

Value bw_summary(double bw_avg) {
  Value s = Value::table();
  s["test"] = "write_bw";
  s["bw_avg"] = bw_avg;
  s["msg_rate"] = 0.000585;
  s["iterations"] = int64_t{500};
  s["text"] = " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n 65536      500   40.1  38.2  0.000585";
  Value run = Value::table();
  run["size"] = int64_t{65536};
  run["bw_avg"] = bw_avg;
  s["runs"].push_back(run);
  return s;
}

}  // namespace

TEST_CASE("a missed minimum names the field, the measured value and the limit") {
  auto r = qpo::exec::judge(min_bw(40), bw_summary(38.2));
  CHECK_FALSE(r.passed);
  CHECK(r.message == "bw_avg 38.2 MB/s < min_bw 40 MB/s");
  REQUIRE(r.measured);
  CHECK(*r.measured == 38.2);
  CHECK(r.limit == 40);
}

TEST_CASE("a met minimum passes, equal included") {
  auto r = qpo::exec::judge(min_bw(40), bw_summary(40));
  CHECK(r.passed);
  CHECK(r.message == "bw_avg 40 MB/s >= min_bw 40 MB/s");
}

TEST_CASE("a maximum fails above the limit") {
  Value s = Value::table();
  s["p99"] = 14.31;
  auto r = qpo::exec::judge(max_p99(12), s);
  CHECK_FALSE(r.passed);
  CHECK(r.message == "p99 14.31 usec > max_p99 12 usec");
}

TEST_CASE("a threshold on a field the summary lacks fails and says so") {
  auto r = qpo::exec::judge(max_p99(12), bw_summary(50));
  CHECK_FALSE(r.passed);
  CHECK_FALSE(r.measured);
  CHECK(r.message == "the summary has no 'p99'; max_p99 12 usec cannot be judged");
}

TEST_CASE("loss is judged as a fraction and shown in percent") {
  qpo::util::Threshold t;
  t.name = "max_loss";
  t.field = "loss";
  t.minimum = false;
  t.limit = 0.01;
  t.unit = "%";
  t.display_scale = 100;
  Value s = Value::table();
  s["loss"] = 0.025;
  auto r = qpo::exec::judge(t, s);
  CHECK_FALSE(r.passed);
  CHECK(r.message == "loss 2.5% > max_loss 1%");
}

TEST_CASE("the verdict reason names the workload and every missed threshold, and nothing when all pass") {
  qpo::plan::WorkloadParams w;
  w.name = "w";
  auto summary = bw_summary(38.2);
  std::vector<qpo::report::ThresholdResult> judged{qpo::exec::judge(min_bw(40), summary),
                                                    qpo::exec::judge(min_bw(30), summary)};
  CHECK(qpo::exec::missed_thresholds(w, judged) == "workload 'w': bw_avg 38.2 MB/s < min_bw 40 MB/s");
  judged.erase(judged.begin());
  CHECK(qpo::exec::missed_thresholds(w, judged).empty());
}

TEST_CASE("the structured results keep the summary's plain fields, its runs and its table apart") {
  qpo::plan::WorkloadParams w;
  w.name = "w";
  w.script = "builtin:write_bw";
  auto r = qpo::exec::workload_result(w, bw_summary(38.2));
  CHECK(r.script == "builtin:write_bw");
  std::vector<std::string> keys;
  for (const auto& [k, v] : r.summary) keys.push_back(k);
  CHECK(keys == std::vector<std::string>{"bw_avg", "iterations", "msg_rate", "test"});
  REQUIRE(r.runs.size() == 1);
  CHECK(r.runs[0].size() == 2);
  CHECK(r.table.rfind(" #bytes", 0) == 0);
}

TEST_CASE("the step headline gives bandwidth and rate, or latency") {
  CHECK(qpo::exec::headline(bw_summary(38.2)) == "BW average 38.2 MB/sec, 0.000585 Mpps");
  Value lat = Value::table();
  lat["t_typical"] = 10.25;
  lat["p99"] = 14.5;
  CHECK(qpo::exec::headline(lat) == "t_typical 10.25 usec, p99 14.5 usec");
  CHECK(qpo::exec::headline(Value()) == "ok");
}

TEST_CASE("the text report shows the table and each threshold under the workload's step") {
  qpo::plan::WorkloadParams w;
  w.name = "w";
  auto summary = bw_summary(38.2);
  auto results = std::make_shared<qpo::report::WorkloadResult>(qpo::exec::workload_result(w, summary));
  results->thresholds.push_back(qpo::exec::judge(min_bw(40), summary));
  qpo::report::RunReport report;
  qpo::report::StepResult step;
  step.phase = "traffic";
  step.verb = "script";
  step.object = "w";
  step.workload = results;
  report.add(step);
  std::string text = qpo::report::render_text(report, false);
  CHECK(text.find("\n      #bytes     #iterations    BW peak[MB/sec]") != std::string::npos);
  CHECK(text.find("\n      65536      500   40.1  38.2  0.000585\n") != std::string::npos);
  CHECK(text.find("     threshold: bw_avg 38.2 MB/s < min_bw 40 MB/s  MISSED\n") != std::string::npos);
}

TEST_CASE("the JSON report carries the results as objects and numbers, not a string") {
  qpo::plan::WorkloadParams w;
  w.name = "w";
  w.script = "builtin:write_bw";
  auto summary = bw_summary(38.2);
  auto results = std::make_shared<qpo::report::WorkloadResult>(qpo::exec::workload_result(w, summary));
  results->thresholds.push_back(qpo::exec::judge(min_bw(40), summary));
  qpo::report::RunReport report;
  qpo::report::StepResult step;
  step.workload = results;
  report.add(step);
  qpo::util::JsonWriter j(false);
  qpo::report::render_json(j, report);
  const std::string& out = j.str();
  CHECK(out.find("\"workloads\":[{\"name\":\"w\",\"script\":\"builtin:write_bw\",\"summary\":{\"bw_avg\":38.2,") !=
        std::string::npos);
  CHECK(out.find("\"runs\":[{\"bw_avg\":38.2,\"size\":65536}]") != std::string::npos);
  CHECK(out.find("{\"name\":\"min_bw\",\"field\":\"bw_avg\",\"unit\":\"MB/s\",\"limit\":40,\"measured\":38.2,"
                 "\"passed\":false,") != std::string::npos);
  CHECK(out.find("\"thresholds_passed\":false") != std::string::npos);
}

TEST_CASE("an op workload's summary has the script workloads' fields, in perftest's units") {
  std::vector<double> lat = {30, 10, 20, 40};  // usec, unsorted
  auto f = qpo::exec::op_summary(1048576, 4, 2.0, lat);
  auto get = [&](const std::string& k) -> qpo::report::Scalar {
    for (const auto& [name, v] : f)
      if (name == k) return v;
    FAIL("no field " << k);
    return {};
  };
  CHECK(std::get<int64_t>(get("bytes")) == 4194304);
  CHECK(std::get<double>(get("bw_avg")) == doctest::Approx(2.0));  // 4 MiB in 2 s, MB = 2^20
  CHECK(std::get<double>(get("msg_rate")) == doctest::Approx(2e-6));
  CHECK(std::get<double>(get("t_min")) == 10);
  CHECK(std::get<double>(get("t_max")) == 40);
  CHECK(std::get<double>(get("t_typical")) == 30);  // the upper median of 4 samples
  CHECK(std::get<double>(get("t_avg")) == 25);
  CHECK(std::get<double>(get("p99")) == 40);
}

TEST_CASE("an op workload without completions timed reports no latency fields") {
  std::vector<double> none;
  auto f = qpo::exec::op_summary(64, 0, 0.0, none);
  for (const auto& [name, v] : f) CHECK(name.rfind("t_", 0) != 0);
}
