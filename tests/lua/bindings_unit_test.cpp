// The Lua API without a device: argument checks and error paths of every binding, the
// worker/control hooks, plain values between states, barriers. Errors must carry the
// script's file:line and the QP's name.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <mutex>

#include "lua/workload.h"
#include "lua_fixture.h"

using qpo::lua::Value;
using qpo::test::FakeEndpoints;
using qpo::test::run_inline;

namespace {

// Runs `body` as the initiator's function; returns the workload error ("" when it passed).
std::string error_of(const std::string& body) {
  FakeEndpoints f;
  auto r = run_inline(f, "function initiator(w)\n  local qp = w.qp\n" + body + "\nend\n");
  return r.ok ? "" : r.error;
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("Lua errors carry the script's file:line and a traceback") {
  FakeEndpoints f;
  auto r = run_inline(f, "function initiator(w)\n  local x = nil\n  return x.y\nend\n");
  CHECK_FALSE(r.ok);
  CHECK(contains(r.error, "inline.lua:3:"));
  CHECK(contains(r.workers[0].traceback, "stack traceback"));
  r = run_inline(f, "function initiator(w)\n  error('boom')\nend\n");
  CHECK(contains(r.error, "inline.lua:2: boom"));
  r = run_inline(f, "function initiator(w)\n  return 1 +\nend\n");
  CHECK(contains(r.error, "inline.lua:3:"));  // syntax error, reported at load
}

TEST_CASE("binding errors name the script line, the call and the QP") {
  std::string e = error_of("  qp:stream{sizee = 64}");
  CHECK(contains(e, "inline.lua:3:"));
  CHECK(contains(e, "unknown field 'sizee'"));
  CHECK(contains(e, "did you mean 'size'"));
  CHECK(contains(error_of("  qp:stream{op = 'wrtie'}"), "unknown op 'wrtie'"));
  CHECK(contains(error_of("  qp:stream{size = '12 parsecs'}"), "qp:stream{}: 'size': unknown size unit 'parsecs' (units: B, KiB, MiB, GiB, TiB (powers of 1024) or KB, MB, GB (powers of 1000))"));
  CHECK(contains(error_of("  qp:stream{size = 'big'}"), "qp:stream{}: 'size': 'big' is not a size (write e.g. 4096, 64KiB or 1MiB)"));
  CHECK(contains(error_of("  qp:stream{depth = 'x'}"), "'depth'"));
  CHECK(contains(error_of("  qp:stream{check = 'yes'}"), "'check' is a seed"));
  CHECK(contains(error_of("  qp:stream{ready = 3}"), "'ready' must be a function"));
  CHECK(contains(error_of("  qp:stream{errors = 'ignore'}"), "errors = \"raise\" or \"return\""));
  CHECK(contains(error_of("  qp:stream{op = 'write', size = 64}"), "QP 'qa': has no verbs QP"));
  CHECK(contains(error_of("  qp:pingpong{op = 'send_imm'}"), "QP 'qa'"));
  CHECK(contains(error_of("  qp:pingpong{initiator = 1}"), "'initiator' must be true or false"));

  e = error_of("  qp:post_send{op = 'write', size = 64, remote = 'nope'}");
  CHECK(contains(e, "inline.lua:3:"));
  CHECK(contains(e, "QP 'qa': no remote MR 'nope'"));
  CHECK(contains(e, "has: ma, mb"));
  CHECK(contains(error_of("  qp:post_send{op = 'write'}"), "'size' is required"));
  CHECK(contains(error_of("  qp:post_send{op = 'read', size = 8192, remote = 'mb'}"), "outside MR 'ma'"));
  CHECK(contains(error_of("  qp:post_send{op = 'write', size = 64, remote = 'mb', remote_offset = 4090}"),
                 "outside remote MR 'mb'"));
  CHECK(contains(error_of("  qp:post_send{op = 'write', size = 100, remote = 'mb', inline = true}"),
                 "max_inline_data 64"));
  CHECK(contains(error_of("  qp:post_send{op = 'faa', remote = 'mb', remote_offset = 4}"), "8-byte aligned"));
  CHECK(contains(error_of("  qp:post_send{op = 'send', size = 8, id = -1}"), "id must be in"));
  CHECK(contains(error_of("  qp:post_send{op = 'send', size = 8}"), "has no verbs QP"));
  CHECK(contains(error_of("  qp:post_send{ {op = 'send', size = 8}, {op = 'bogus', size = 8} }"),
                 "post_send[2]: unknown op 'bogus'"));
  CHECK(contains(error_of("  qp:post_recv{size = 64, count = 0}"), "count must be between"));
  CHECK(contains(error_of("  qp:post_recv{mr = 'zz', size = 64}"), "no local MR 'zz'"));
  CHECK(contains(error_of("  qp:post_recv{size = 64, sge = {{size = 1}}}"), "has no verbs QP"));
  CHECK(contains(error_of("  qp:mr('nope')"), "QP 'qa': no local MR 'nope'"));
  CHECK(contains(error_of("  qp:remote('nope')"), "no remote MR 'nope'"));
  CHECK(contains(error_of("  qp:state()"), "has no verbs QP"));
  CHECK(contains(error_of("  qp.post_send({})"), "expected a Qp"));
  CHECK(error_of("  assert(w.qps.qb == nil)") == "");
  CHECK(error_of("  assert(qp.send_cq == nil and qp.recv_cq == nil)") == "");
}

TEST_CASE("qp fields, MR lists and buffers") {
  CHECK(error_of("  assert(qp.name == 'qa' and qp.type == 'RC' and qp.peer == 'qb')\n"
                 "  assert(qp.max_inline == 64 and qp.qpn == 0 and not qp.has_srq)\n"
                 "  assert(table.concat(qp:mrs(), ',') == 'ma,mb')\n"
                 "  assert(table.concat(qp:remotes(), ',') == 'ma,mb')\n"
                 "  local r = qp:remote('mb')\n"
                 "  assert(r.name == 'mb' and r.addr == 0x2000 and r.rkey == 2 and r.length == 4096)\n"
                 "  assert(tostring(qp) == 'Qp(qa, RC)')\n"
                 "  assert(w.qps.qa == qp)") == "");
  CHECK(error_of("  local b = qp:mr('ma')\n"
                 "  assert(b.name == 'ma' and b.length == 4096 and b.lkey == 1)\n"
                 "  b:fill(7)\n"
                 "  assert(b:check(7))\n"
                 "  local ok, at = b:check(8)\n"
                 "  assert(not ok and at >= 0)\n"
                 "  b:fill(9, 100, 50)\n"
                 "  assert(b:check(9, 100, 50))\n"
                 "  local ok2, at2 = b:check(7)\n"
                 "  assert(not ok2 and at2 >= 100 and at2 < 150)\n"
                 "  b:zero(0, 16)\n"
                 "  assert(b:read(0, 4) == '\\0\\0\\0\\0')\n"
                 "  b:write(8, 'qpo')\n"
                 "  assert(b:read(8, 3) == 'qpo')\n"
                 "  assert(b:u64(16, 0x1122334455667788) == 0x1122334455667788)\n"
                 "  assert(b:u64(16) == 0x1122334455667788)\n"
                 "  assert(qp:mr().name == 'ma')") == "");
  CHECK(contains(error_of("  qp:mr('ma'):fill(1, 4000, 200)"), "outside MR 'ma' (4096 bytes)"));
  CHECK(contains(error_of("  qp:mr('ma'):write(4095, 'xy')"), "outside MR 'ma'"));
  CHECK(contains(error_of("  qp:mr('ma'):fill('seed')"), "seed must be an integer"));
  CHECK(contains(error_of("  qp:mr('ma').fill(1)"), "call it as buf:fill"));
}

TEST_CASE("qpo.* helpers") {
  CHECK(error_of("  assert(qpo.size('64KiB') == 65536 and qpo.size('1MiB') == 1048576 and qpo.size(12) == 12)\n"
                 "  local s = qpo.stats({3, 1, 2, 4})\n"
                 "  assert(s.samples == 4 and s.t_min == 1 and s.t_max == 4 and s.t_typical == 3)\n"
                 "  assert(qpo.op.write == 2 and qpo.ops[1] == 'send')\n"
                 "  assert(qpo.status_name(10) == 'IBV_WC_REM_ACCESS_ERR')\n"
                 "  local t0 = qpo.now(); qpo.sleep(0.01); assert(qpo.now() - t0 >= 0.005)\n"
                 "  assert(qpo.ticks() > 0 and qpo.ticks_per_second() > 0)\n"
                 "  assert(qpo.defaults({a = 1}, {a = 2, b = 3}).b == 3)") == "");
  CHECK(contains(error_of("  qpo.size('lots')"), "not a size"));
}

TEST_CASE("qpo.workload_defaults is the one table of defaults, and qpo.perf's built-ins start from it") {
  CHECK(error_of("  local d = qpo.workload_defaults\n"
                 "  assert(d.op.size == 4096 and d.op.iterations == 1000)\n"
                 "  assert(d.bandwidth.size == 65536 and d.bandwidth.iterations == 5000)\n"
                 "  assert(d.bandwidth.tx_depth == 128 and d.bandwidth.rx_depth == 512)\n"
                 "  assert(d.latency.size == 2 and d.latency.iterations == 1000 and d.latency.rx_depth == 16)\n"
                 "  local perf = require('qpo.perf')\n"
                 "  assert(perf.BW.size == d.bandwidth.size and perf.BW.tx_depth == d.bandwidth.tx_depth)\n"
                 "  assert(perf.LAT.size == d.latency.size and perf.LAT.rx_depth == d.latency.rx_depth)") == "");
}

TEST_CASE("sizes in scripts mean what they mean in scenario files: KiB are 1024 bytes, KB 1000") {
  CHECK(error_of("  assert(qpo.size('64KiB') == 65536)\n"
                 "  assert(qpo.size('64KB') == 64000)\n"
                 "  assert(qpo.size('2MiB') == 2097152 and qpo.size('2MB') == 2000000)\n"
                 "  assert(qpo.size('0x1000') == 4096 and qpo.size('8B') == 8)") == "");
  // A bare K, M or G is ambiguous: refused with both spellings, as in a scenario file.
  CHECK(contains(error_of("  qpo.size('1M')"),
                 "qpo.size('1M'): unknown size unit 'M' (write 1MiB (powers of 1024) or 1MB (powers of 1000))"));
  CHECK(contains(error_of("  qpo.stats({1, 'x'})"), "element 2 is not a number"));
}

TEST_CASE("qpo.together: runs at the same time as one, their bytes over the longest one's time") {
  // 2 MiB in 1 s and 1 MiB in 0.5 s: 3 MiB in 1 s = 3 MB/s (the averages would sum to 4).
  CHECK(error_of("  local t = qpo.together({ { iterations = 20, bytes = 2097152, seconds = 1 },\n"
                 "                           { iterations = 10, bytes = 1048576, seconds = 0.5 } })\n"
                 "  assert(t.iterations == 30 and t.bytes == 3145728 and t.seconds == 1, 'sums')\n"
                 "  assert(t.bw_avg == 3 and t.msg_rate == 30 / 1e6, 'rates')") == "");
  CHECK(contains(error_of("  qpo.together({ { bytes = 'x' } })"), "qpo.together: run 1.bytes is not a number"));
}

TEST_CASE("qpo.rate reads a rate limit in the thresholds' units: bytes or messages per second") {
  CHECK(error_of("  assert(qpo.rate('10Gb/s').bytes == 1.25e9)\n"
                 "  assert(qpo.rate('40MB/s').bytes == 40 * 1048576)\n"  // perftest's MB: 2^20 bytes
                 "  assert(qpo.rate('0.5Mpps').messages == 5e5 and qpo.rate('0.5Mpps').bytes == nil)\n"
                 "  assert(qpo.rate('20000pps').messages == 20000)") == "");
  // A bare number has no unit: refused, not read as MB/s or Gb/s.
  CHECK(contains(error_of("  qpo.rate('10')"), "qpo.rate('10'): not a bandwidth or a message rate with its unit"));
  CHECK(contains(error_of("  qpo.rate('10Gbps')"), "write e.g. 10Gb/s"));
  CHECK(contains(error_of("  qpo.rate('1e3')"), "qpo.rate('1e3'): not a bandwidth or a message rate with its unit"));
  CHECK(contains(error_of("  qpo.rate(1000)"), "qpo.rate('1000'): not a bandwidth"));
  CHECK(contains(error_of("  qpo.rate('0Gb/s')"), "qpo.rate('0Gb/s'): a rate limit is above 0"));
}

TEST_CASE("setup completes args, workers get them, report summarises") {
  FakeEndpoints f;
  Value args = Value::table();
  args["size"] = 64;
  auto r = run_inline(f,
                      "function setup(args) args.depth = args.depth or 16; return args end\n"
                      "function initiator(w) return { size = w.args.size, depth = w.args.depth, role = w.role } end\n"
                      "function target(w) return { peer = w.qp.peer, index = w.index, count = w.count } end\n"
                      "function report(res) return { total = res.qa.result.size + res.qb.result.index } end\n",
                      2, true, args);
  REQUIRE_MESSAGE(r.ok, r.error);
  CHECK(r.workers[0].result.number_or("depth", 0) == 16);
  CHECK(r.workers[0].result.string_or("role", "") == "initiator");
  CHECK(r.workers[1].result.string_or("peer", "") == "qa");
  CHECK(r.workers[1].result.number_or("count", 0) == 2);
  CHECK(r.summary.number_or("total", 0) == 66);
  CHECK(r.summary.to_json() == "{\"total\":66}");
}

TEST_CASE("only plain values leave a state") {
  FakeEndpoints f;
  auto r = run_inline(f, "function initiator(w) return { f = function() end } end\n");
  CHECK_FALSE(r.ok);
  CHECK(contains(r.error, "only plain values"));
  CHECK(contains(r.error, ".f is a function"));
  r = run_inline(f, "function initiator(w) return { [10] = 1 } end\n");
  CHECK(contains(r.error, "sparse integer"));
  r = run_inline(f, "function initiator(w) local t = {}; t.t = t; return t end\n");
  CHECK(contains(r.error, "deeper than"));
  r = run_inline(f, "function initiator(w) return { w.qp } end\n");
  CHECK(contains(r.error, "userdata"));
}

TEST_CASE("roles: a missing function idles, no function at all is an error") {
  FakeEndpoints f;
  auto r = run_inline(f, "function initiator(w) return 1 end\n", 2);
  CHECK(r.ok);
  CHECK(r.workers[0].ran);
  CHECK_FALSE(r.workers[1].ran);
  r = run_inline(f, "function run(w) return w.role end\n", 2);
  CHECK(r.ok);
  CHECK(r.workers[1].result.as_string() == "target");
  r = run_inline(f, "x = 1\n", 2);
  CHECK_FALSE(r.ok);
  CHECK(contains(r.error, "defines no function for any role (initiator, target)"));
  r = run_inline(f, "function setup(a) error('bad args') end\nfunction initiator(w) end\n");
  CHECK(contains(r.error, "inline.lua:1: bad args"));
}

TEST_CASE("barriers: workers meet; a failure breaks the barrier for the others") {
  FakeEndpoints f;
  std::atomic<int> cross_host{0};
  qpo::lua::Callbacks cb;
  cb.barrier = [&](const std::string& tag) {
    CHECK(tag == "start");
    ++cross_host;
  };
  auto r = run_inline(f,
                      "function initiator(w) w:barrier('start'); return 1 end\n"
                      "function target(w) w:barrier('start'); return 2 end\n",
                      2, true, Value::table(), cb);
  CHECK_MESSAGE(r.ok, r.error);
  CHECK(cross_host == 1);  // once per local barrier, by the last worker to arrive

  r = run_inline(f,
                 "function initiator(w) qpo.sleep(0.05); error('initiator gave up') end\n"
                 "function target(w) w:barrier('start'); return 2 end\n",
                 2);
  CHECK_FALSE(r.ok);
  CHECK(contains(r.error, "worker 'qa' (initiator): inline.lua:1: initiator gave up"));
  CHECK_MESSAGE(contains(r.workers[1].error, "broken"), std::string(r.workers[1].error + " ok=" + std::to_string(r.workers[1].ok) + " res=" + r.workers[1].result.to_json()));

  // A worker that finishes early drops out instead of leaving the other waiting.
  r = run_inline(f,
                 "function initiator(w) return 1 end\n"
                 "function target(w) qpo.sleep(0.05); w:barrier('late'); return 2 end\n",
                 2);
  CHECK_MESSAGE(r.ok, r.error);
}

TEST_CASE("print and w:log reach the log callback; w:running follows stop") {
  FakeEndpoints f;
  std::vector<std::string> lines;
  std::mutex m;
  std::atomic<bool> stop{false};
  qpo::lua::Callbacks cb;
  cb.log = [&](const std::string& worker, const std::string& line) {
    std::lock_guard lock(m);
    lines.push_back(worker + ": " + line);
  };
  cb.stop = &stop;
  stop = true;
  auto r = run_inline(f,
                      "function initiator(w)\n"
                      "  print('hello', 42)\n"
                      "  w:log('%s is %d', 'x', 7)\n"
                      "  local t0 = qpo.now()\n"
                      "  while w:running() and qpo.now() - t0 < 5 do qpo.sleep(0.01) end\n"
                      "  return w:running()\n"
                      "end\n",
                      1, true, Value::table(), cb);
  CHECK_MESSAGE(r.ok, r.error);
  CHECK(r.workers[0].result.as_bool() == false);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0] == "qa: hello\t42");
  CHECK(lines[1] == "qa: x is 7");
}

TEST_CASE("workload specs are checked before any script runs") {
  FakeEndpoints f;
  qpo::lua::WorkloadSpec spec;
  spec.source = "function initiator(w) end";
  CHECK(contains(qpo::lua::run_workload(spec, f.eps).error, "has no workers"));
  spec.workers = {{"qa", "initiator", {"nope"}}};
  CHECK(contains(qpo::lua::run_workload(spec, f.eps).error, "no endpoint for QP 'nope'"));
  spec.workers = {{"qa", "report", {"qa"}}};
  CHECK(contains(qpo::lua::run_workload(spec, f.eps).error, "not a valid role"));
  spec.workers = {{"qa", "initiator", {"qa"}}};
  spec.source = "";
  spec.script = "builtin:no_such_thing";
  CHECK(contains(qpo::lua::run_workload(spec, f.eps).error, "no built-in workload 'no_such_thing'"));
  spec.script = "/nonexistent/x.lua";
  CHECK(contains(qpo::lua::run_workload(spec, f.eps).error, "cannot read"));
}

TEST_CASE("plain values") {
  Value v = Value::table();
  v["a"] = 1;
  v["b"] = "x\"y";
  v["c"].push_back(1.5);
  v["c"].push_back(true);
  Value copy = v;
  copy["a"] = 2;
  CHECK(v.number_or("a", 0) == 1);  // deep copy
  CHECK(v.to_json() == "{\"a\":1,\"b\":\"x\\\"y\",\"c\":[1.5,true]}");
  CHECK(Value().to_json() == "null");
}

TEST_CASE("with several unknown options a built-in names the first in sorted order, every run") {
  qpo::lua::WorkloadSpec spec;
  spec.script = "builtin:write_bw";
  spec.workers = {{"qa", "initiator", {"qa"}}, {"qb", "target", {"qb"}}};
  spec.args["zz_typo"] = 1;
  spec.args["mm_typo"] = 2;
  spec.args["aa_typo"] = 3;
  for (int run = 0; run < 5; ++run) CHECK(contains(qpo::lua::check_workload(spec), "unknown option 'aa_typo'"));
}

TEST_CASE("every built-in loads and accepts its defaults; typos in options fail early") {
  auto names = qpo::lua::builtin_workloads();
  for (const char* want : {"write_bw", "read_bw", "send_bw", "atomic_bw", "send_lat", "write_lat", "read_lat",
                           "examples/mixed_burst", "examples/ud_incast"})
    CHECK(std::find(names.begin(), names.end(), want) != names.end());
  for (const auto& name : names) {
    CAPTURE(name);
    qpo::lua::WorkloadSpec spec;
    spec.script = "builtin:" + name;
    spec.workers = {{"qa", "initiator", {"qa"}}, {"qb", "target", {"qb"}}};
    CHECK(qpo::lua::check_workload(spec) == "");
    spec.args["sizee"] = 64;
    CHECK(contains(qpo::lua::check_workload(spec), "unknown option 'sizee'"));
  }
  qpo::lua::WorkloadSpec spec;
  spec.script = "builtin:atomic_bw";
  spec.workers = {{"qa", "initiator", {"qa"}}};
  spec.args["op"] = "swap";
  CHECK(contains(qpo::lua::check_workload(spec), "op is \"faa\" or \"cas\""));
  spec.script = "builtin:write_bw";
  spec.args = Value::table();
  spec.args["sizes"] = "some";
  CHECK(contains(qpo::lua::check_workload(spec), "sizes is \"all\" or a list"));
  spec.args = Value::table();
  spec.args["size"] = "huge";
  CHECK(contains(qpo::lua::check_workload(spec), "not a size"));
}

// A QP whose RQ the executor's receives fill has 0 room: a limit, not "no limit" (the data
// path used to post into the full queue and fail with ENOMEM).
TEST_CASE("a stream that receives on a full receive queue fails before posting, naming why") {
  FakeEndpoints f;
  f.eps["qa"].max_recv_wr = 0;
  f.eps["qa"].recv_limited = true;
  auto r = run_inline(f, "function initiator(w) return w.qp:stream{op = 'recv', size = 64, iterations = 4, rx_depth = 4, mr = 'ma'} end");
  CHECK_FALSE(r.ok);
  CHECK(contains(r.error, "QP 'qa': its receive queue has no room left"));
}

TEST_CASE("the built-ins' receive depth refuses a full receive queue") {
  FakeEndpoints f;
  f.eps["qa"].max_recv_wr = 0;
  f.eps["qa"].recv_limited = true;
  auto r = run_inline(f,
                      "function initiator(w)\n"
                      "  local ok, e = pcall(require('qpo.perf').rx_depth, {args = {rx_depth = 8}, qp = w.qp}, {half = 4096, mr = 'ma'}, 64)\n"
                      "  return tostring(e)\n"
                      "end");
  REQUIRE_MESSAGE(r.ok, r.error);
  CHECK(r.workers[0].result.as_string() == "QP 'qa': its receive queue has no room left: receives the executor keeps posted fill max_recv_wr");
}

TEST_CASE("qp.max_recv_wr: the room left when known (0 = full), nil when not") {
  FakeEndpoints f;
  f.eps["qa"].max_recv_wr = 0;
  f.eps["qa"].recv_limited = true;
  auto r = run_inline(f, "function initiator(w) return tostring(w.qp.max_recv_wr) .. ' ' .. tostring(w.qps.qa.max_recv_wr) end");
  REQUIRE_MESSAGE(r.ok, r.error);
  CHECK(r.workers[0].result.as_string() == "0 0");
  f.eps["qa"].recv_limited = false;
  r = run_inline(f, "function initiator(w) return tostring(w.qp.max_recv_wr) end");
  REQUIRE_MESSAGE(r.ok, r.error);
  CHECK(r.workers[0].result.as_string() == "nil");
}

TEST_CASE("perf.report_bw prints a stream's notes (a restarted send queue) under the table") {
  FakeEndpoints f;
  auto r = run_inline(f,
                      "local perf = require 'qpo.perf'\n"
                      "function initiator(w)\n"
                      "  return { runs = { { size = 64, iterations = 10, bw_peak = 1, bw_avg = 1, msg_rate = 0.5,\n"
                      "                      notes = { \"QP 'qa': the device left a send unprocessed\" } } } }\n"
                      "end\n"
                      "function report(res) return perf.report_bw('write_bw', res) end\n");
  REQUIRE_MESSAGE(r.ok, r.error);
  std::string text = r.summary.string_or("text", "");
  CHECK(contains(text, " #bytes     #iterations"));
  CHECK(contains(text, "\nnote: QP 'qa': the device left a send unprocessed"));
}

TEST_CASE("perf.report_bw prints no note line when no stream had one") {
  FakeEndpoints f;
  auto r = run_inline(f,
                      "local perf = require 'qpo.perf'\n"
                      "function initiator(w) return { runs = { { size = 64, iterations = 10, bw_avg = 1, msg_rate = 0.5 } } } end\n"
                      "function report(res) return perf.report_bw('write_bw', res) end\n");
  REQUIRE_MESSAGE(r.ok, r.error);
  CHECK_FALSE(contains(r.summary.string_or("text", ""), "note:"));
}
