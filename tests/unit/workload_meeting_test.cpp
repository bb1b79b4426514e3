// Script workloads across hosts: the notes the hosts exchange (exact values), what a round
// means (another host's failure named with its last barrier, disagreeing barrier tags),
// hosts meeting as threads on the in-process channel (with and without workers, one failing
// mid-way), and a step's workload results surviving the agent's report codec. One behaviour
// per test case.
#include <doctest/doctest.h>
#include <stdexcept>
#include <thread>

#include "cluster/codec.h"
#include "exec/exchange.h"
#include "exec/workload_meeting.h"
#include "lua/value_codec.h"
#include "test_threads.h"

using qpo::exec::InProcessChannel;
using qpo::exec::MeetingNote;
using qpo::exec::WorkloadMeeting;
using qpo::lua::Value;

namespace {

// A report as the controller reads it back from an agent's message text.
qpo::report::RunReport read_back(const std::string& json) {
  std::string err;
  auto v = qpo::util::json::parse(json, &err);
  REQUIRE_MESSAGE(v, err);
  return qpo::cluster::read_report(*v);
}

MeetingNote note(const std::string& host, const std::string& kind, const std::string& tag = "",
                 const std::string& error = "") {
  MeetingNote n;
  n.host = host;
  n.kind = kind;
  n.tag = tag;
  n.error = error;
  return n;
}

qpo::lua::WorkerResult worker(const std::string& name, const std::string& role, double bw) {
  qpo::lua::WorkerResult w;
  w.name = name;
  w.role = role;
  w.ran = w.ok = true;
  w.result = Value::table();
  w.result["bw"] = bw;
  return w;
}

}  // namespace

TEST_CASE("a value crosses hosts exactly: integers stay integers, strings keep any byte") {
  Value v = Value::table();
  v["n"] = int64_t{7};
  v["x"] = 0.1;
  v["s"] = std::string("a:b\n;\0c", 7);
  v["list"].push_back(Value(true));
  v["list"].push_back(Value());
  Value back = qpo::lua::decode_value(qpo::lua::encode_value(v));
  CHECK(back.find("n")->kind() == Value::Kind::Int);
  CHECK(back.find("n")->as_int() == 7);
  CHECK(back.find("x")->as_number() == 0.1);
  CHECK(back.find("s")->as_string() == std::string("a:b\n;\0c", 7));
  REQUIRE(back.find("list")->array().size() == 2);
  CHECK(back.find("list")->array()[1].is_nil());
}

TEST_CASE("a truncated value text is an error, not a crash") {
  std::string text = qpo::lua::encode_value(Value("hello"));
  CHECK_THROWS_WITH_AS(qpo::lua::decode_value(text.substr(0, text.size() - 2)), doctest::Contains("malformed value"),
                       std::runtime_error);
}

TEST_CASE("another host's failure names that host and the last barrier it passed") {
  std::vector<MeetingNote> notes{note("a", "barrier", "write_bw done 64"),
                                 note("b", "failed", "write_bw 64", "worker 'qb' (target): boom")};
  CHECK(qpo::exec::round_failure(notes, "a", "w") ==
        "another host failed: host b after barrier 'write_bw 64': worker 'qb' (target): boom");
}

TEST_CASE("a host's own failure is its message, not an echo of the others'") {
  std::vector<MeetingNote> notes{note("a", "failed", "", "worker 'qa' (initiator): oops"),
                                 note("b", "failed", "", "worker 'qb' (target): boom")};
  CHECK(qpo::exec::round_failure(notes, "a", "w") == "worker 'qa' (initiator): oops");
}

TEST_CASE("hosts at different barrier tags fail alike, each host and tag named") {
  std::vector<MeetingNote> notes{note("a", "barrier", "start"), note("b", "barrier", "go")};
  CHECK(qpo::exec::round_failure(notes, "a", "w") ==
        "hosts disagree at a barrier of workload 'w': host a at 'start', host b at 'go'");
}

TEST_CASE("a host that is done does not hold back a host at a barrier") {
  std::vector<MeetingNote> notes{note("a", "done"), note("b", "barrier", "x")};
  CHECK(qpo::exec::round_failure(notes, "a", "w").empty());
}

TEST_CASE("two hosts pass barriers together and each gets every host's worker results") {
  InProcessChannel ch(2);
  std::vector<qpo::lua::WorkerResult> got_a, got_b;
  qpo::testing::WorkerThread b([&] {
    WorkloadMeeting m(ch, "b", "w");
    m.ready({}, "");
    m.barrier("start");
    m.barrier("done");
    got_b = m.finish({worker("qb", "target", 2)}, "");
  });
  WorkloadMeeting m(ch, "a", "w");
  m.ready({}, "");
  m.barrier("start");
  m.barrier("done");
  got_a = m.finish({worker("qa", "initiator", 1)}, "");
  CHECK(b.join() == "");
  REQUIRE(got_a.size() == 2);
  REQUIRE(got_b.size() == 2);
  double sum = 0;
  for (const auto& w : got_a) sum += w.result.number_or("bw", 0);
  CHECK(sum == 3);
  CHECK(m.closed());
}

TEST_CASE("a host without workers meets the others until they are done") {
  InProcessChannel ch(2);
  std::vector<qpo::lua::WorkerResult> spectator;
  qpo::testing::WorkerThread idle([&] {
    WorkloadMeeting m(ch, "c", "w");
    m.ready({}, "");
    spectator = m.finish({}, "");
  });
  WorkloadMeeting m(ch, "a", "w");
  m.ready({}, "");
  m.barrier("one");
  m.barrier("two");
  auto all = m.finish({worker("qa", "initiator", 1)}, "");
  CHECK(idle.join() == "");
  CHECK(all.size() == 1);
  CHECK(spectator.size() == 1);
}

TEST_CASE("a host that fails after a barrier fails the host waiting at the next one, naming both") {
  InProcessChannel ch(2);
  qpo::testing::WorkerThread b([&] {
    WorkloadMeeting m(ch, "b", "w");
    m.ready({}, "");
    m.barrier("write_bw 64");
    CHECK_THROWS(m.finish({}, "worker 'qb' (target): boom"));
  });
  WorkloadMeeting m(ch, "a", "w");
  m.ready({}, "");
  m.barrier("write_bw 64");
  CHECK_THROWS_WITH(m.barrier("write_bw done 64"),
                    "another host failed: host b after barrier 'write_bw 64': worker 'qb' (target): boom");
  CHECK(b.join() == "");
  CHECK(m.closed());
  CHECK_FALSE(m.channel_failed());
}

TEST_CASE("the receives to clear reach every host, by the QPs' plan ids") {
  InProcessChannel ch(2);
  std::map<qpo::plan::QpId, uint32_t> at_b;
  qpo::testing::WorkerThread b([&] { at_b = WorkloadMeeting(ch, "b", "w").ready({{7, 1}}, ""); });
  auto at_a = WorkloadMeeting(ch, "a", "w").ready({{0, 2}}, "");
  CHECK(b.join() == "");
  CHECK(at_a == std::map<qpo::plan::QpId, uint32_t>{{0, 2}, {7, 1}});
  CHECK(at_b == at_a);
}

TEST_CASE("a host at a stage barrier while another meets for a workload: both are told the run is out of step") {
  InProcessChannel ch(2);
  bool barrier_ok = true;
  qpo::testing::WorkerThread b([&] { barrier_ok = ch.barrier("workloads wave 1", true); });
  WorkloadMeeting m(ch, "a", "w");
  CHECK_THROWS_WITH(m.barrier("x"), doctest::Contains("broke before its first barrier"));
  CHECK(b.join() == "");
  CHECK_FALSE(barrier_ok);
  CHECK(m.channel_failed());
}

TEST_CASE("a step's workload results survive the agent's report codec") {
  qpo::report::RunReport r;
  qpo::report::StepResult st;
  st.verb = "script";
  st.object = "write_bw";
  auto w = std::make_shared<qpo::report::WorkloadResult>();
  w->name = "write_bw";
  w->script = "builtin:write_bw";
  w->summary = {{"bw_avg", 94.85}, {"iterations", int64_t{300}}, {"test", std::string("write_bw")}, {"checked", true}};
  w->runs.push_back(w->summary);
  w->table = "#bytes ...\n65536 ...";
  qpo::report::ThresholdResult t;
  t.name = "min_bw";
  t.field = "bw_avg";
  t.unit = "MB/s";
  t.limit = 1;
  t.measured = 94.85;
  t.passed = true;
  t.message = "bw_avg 94.85 MB/s >= min_bw 1 MB/s";
  w->thresholds.push_back(t);
  st.workload = w;
  r.steps.push_back(st);
  auto back = read_back(qpo::cluster::report_json(r));
  REQUIRE(back.steps.size() == 1);
  REQUIRE(back.steps[0].workload);
  const auto& b = *back.steps[0].workload;
  CHECK(b.script == "builtin:write_bw");
  REQUIRE(b.summary.size() == 4);
  for (const auto& [k, v] : b.summary) {
    if (k == "bw_avg") CHECK(std::get<double>(v) == 94.85);
    if (k == "iterations") CHECK(std::get<int64_t>(v) == 300);
    if (k == "test") CHECK(std::get<std::string>(v) == "write_bw");
    if (k == "checked") CHECK(std::get<bool>(v));
  }
  CHECK(b.runs.size() == 1);
  CHECK(b.table == w->table);
  REQUIRE(b.thresholds.size() == 1);
  CHECK(b.thresholds[0].measured == 94.85);
  CHECK(b.thresholds[0].passed);
  CHECK(b.thresholds[0].message == t.message);
}

TEST_CASE("a workload's measurement quality crosses the wire with its results") {
  qpo::report::RunReport r;
  qpo::report::StepResult st;
  st.verb = "script";  // a script's step is named after its workload
  st.object = "lat";
  auto w = std::make_shared<qpo::report::WorkloadResult>();
  w->name = "lat";
  w->quality = {{"source", std::string("lab host")}, {"cpu_wait", 0.47}, {"trusted", false}};
  st.workload = w;
  r.steps.push_back(st);
  auto back = read_back(qpo::cluster::report_json(r));
  REQUIRE(back.steps.size() == 1);
  REQUIRE(back.steps[0].workload);
  const auto& q = back.steps[0].workload->quality;
  REQUIRE(q.size() == 3);
  CHECK(std::get<std::string>(q[0].second) == "lab host");
  CHECK(std::get<double>(q[1].second) == 0.47);
  CHECK_FALSE(std::get<bool>(q[2].second));
}

// The in-process channel's phase timeout (qpo run --local with several hosts).
namespace {

using std::chrono::milliseconds;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

TEST_CASE("a host that never reaches the next stage: the waiting host gives up after the phase timeout, naming it") {
  InProcessChannel ch({"a", "b"}, milliseconds(300));
  qpo::testing::WorkerThread b([&] { CHECK(ch.member(1).barrier("smoke", true)); });
  CHECK(ch.member(0).barrier("smoke", true));
  CHECK(b.join() == "");
  // b is now busy forever "after 'smoke'"; a waits at the next stage.
  auto t0 = std::chrono::steady_clock::now();
  CHECK_FALSE(ch.member(0).barrier("workloads ready", true));
  CHECK(seconds_since(t0) >= 0.25);
  CHECK(seconds_since(t0) < 2);
  CHECK(ch.member(0).failure() == "host b: no answer within 300 ms during the stage after 'smoke'");
  CHECK_FALSE(ch.member(0).stop_request()->requested);
  REQUIRE(ch.member(1).stop_request()->requested);
  CHECK(ch.member(1).stop_request()->why == "stopped: no answer within 300 ms during the stage after 'smoke' (--phase-timeout)");
  // The late host, once stopped, finds the run over at its next stage: no waiting.
  t0 = std::chrono::steady_clock::now();
  CHECK_FALSE(ch.member(1).barrier("workloads ready", false));
  CHECK(seconds_since(t0) < 0.1);
}

TEST_CASE("a host late within a workload is named with the workload; the meeting's error says so") {
  InProcessChannel ch({"a", "b"}, milliseconds(300));
  qpo::testing::WorkerThread b([&] { WorkloadMeeting(ch.member(1), "b", "w").ready({}, ""); });
  WorkloadMeeting m(ch.member(0), "a", "w");
  m.ready({}, "");
  CHECK(b.join() == "");
  CHECK_THROWS_WITH(m.barrier("done"),
                    "another host failed: host b: no answer within 300 ms during workload 'w' (after a round of its meeting)");
  CHECK(m.channel_failed());
  CHECK(ch.member(1).stop_request()->requested);
}

TEST_CASE("every host busy past the phase timeout (nobody waiting): check_deadline stops them all") {
  InProcessChannel ch({"a", "b"}, milliseconds(200));
  ch.check_deadline();  // not yet due
  CHECK(ch.failure().empty());
  std::this_thread::sleep_for(milliseconds(250));
  ch.check_deadline();
  CHECK(ch.failure() == "host a: no answer within 200 ms during setup; host b: no answer within 200 ms during setup");
  CHECK(ch.member(0).stop_request()->requested);
  CHECK(ch.member(1).stop_request()->requested);
}

TEST_CASE("hosts that keep arriving in time never time out, however long the run") {
  InProcessChannel ch({"a", "b"}, milliseconds(300));
  bool all_ok = true;
  qpo::testing::WorkerThread b([&] {
    for (int i = 0; i < 6; ++i) {
      std::this_thread::sleep_for(milliseconds(100));
      all_ok &= ch.member(1).barrier("s" + std::to_string(i), true);
    }
  });
  for (int i = 0; i < 6; ++i) CHECK(ch.member(0).barrier("s" + std::to_string(i), true));
  CHECK(b.join() == "");
  CHECK(all_ok);
  CHECK(ch.failure().empty());
}

TEST_CASE("an anonymous channel (no names, no phase timeout) still carries the exchange") {
  InProcessChannel ch(2);
  qpo::exec::Directory got_b;
  qpo::testing::WorkerThread b([&] {
    qpo::exec::Directory mine;
    mine.mrs[{qpo::exec::MrKey::Kind::Mr, 1}].rkey = 2;
    CHECK(ch.exchange(std::move(mine), true, &got_b));
  });
  qpo::exec::Directory mine, got_a;
  mine.mrs[{qpo::exec::MrKey::Kind::Mr, 0}].rkey = 1;
  CHECK(ch.exchange(std::move(mine), true, &got_a));
  CHECK(b.join() == "");
  CHECK(got_a.mrs.size() == 2);
  CHECK(got_b.mrs.at({qpo::exec::MrKey::Kind::Mr, 0}).rkey == 1);
  CHECK(ch.stop_request() == nullptr);
}

TEST_CASE("w:signal() counters across hosts: each host adds its own, every host reads the sum, per workload, without waiting") {
  InProcessChannel ch({"a", "b"}, milliseconds(0));
  std::map<std::string, int64_t> at_a, at_b, other;
  CHECK(ch.member(0).signals("incast", {{"sent", 2}}, &at_a));
  CHECK(at_a == std::map<std::string, int64_t>{{"sent", 2}});
  CHECK(ch.member(1).signals("incast", {{"sent", 1}, {"ready", 1}}, &at_b));
  CHECK(at_b == std::map<std::string, int64_t>{{"ready", 1}, {"sent", 3}});
  CHECK(ch.member(0).signals("incast", {}, &at_a));
  CHECK(at_a == at_b);
  CHECK(ch.member(0).signals("another", {}, &other));
  CHECK(other.empty());
}
