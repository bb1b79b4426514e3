// Every built-in workload and example on a loopback pair in the lab (rxe0), data checked, plus
// the Lua API's device paths: the per-WR API, events, SRQ, a shared CQ, and errors that must
// carry the script's file:line, the QP name and the status name.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "dataplane/testbed.h"
#include "lua/workload.h"
#include "test_threads.h"

using qpo::dataplane::Testbed;
using qpo::dataplane::TestbedQp;
using qpo::lua::Value;
using qpo::lua::WorkloadResult;
using qpo::lua::WorkloadSpec;

namespace {

constexpr size_t kMr = 4 << 20;

struct PairOptions {
  std::string type = "RC";
  bool shared_cq = false;
  bool channels = false;
  bool srq = false;
  bool context_per_side = false;  // b in a device context and PD of its own, as on another host
};

// a <-> b, MRs ma (a's) and mb (b's), one PD as the executor would have for one host.
struct Pair {
  Testbed tb;
  explicit Pair(PairOptions o = {}) {
    // a's objects, then b's: with context_per_side, b's are made in the second side.
    tb.add_mr("ma", kMr);
    tb.add_cq("ca", 8192, o.channels);
    tb.add_qp("a", {o.type, "ca", "ca"});
    if (o.context_per_side) tb.new_side();
    tb.add_mr("mb", kMr);
    if (!o.shared_cq) tb.add_cq("cb", 8192, o.channels);
    std::string cb = o.shared_cq ? "ca" : "cb";
    TestbedQp qb{o.type, cb, cb};
    if (o.srq) {
      tb.add_srq("s", 1024);
      qb.srq = "s";
    }
    tb.add_qp("b", qb);
    tb.connect("a", "b");
  }
};

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

WorkloadResult run(Testbed& tb, const std::string& script, Value args, bool two = true) {
  WorkloadSpec spec;
  spec.name = script;
  bool inline_source = script.find('\n') != std::string::npos;
  spec.script = inline_source ? "inline.lua" : script;
  if (inline_source) spec.source = script;
  args["local_mr"] = "ma";
  args["remote_mr"] = "mb";
  spec.args = args;
  spec.timeout_ms = 20000;
  spec.workers.push_back({"a", "initiator", {"a"}});
  if (two) spec.workers.push_back({"b", "target", {"b"}});
  return qpo::lua::run_workload(spec, tb.endpoints());
}

Value args(std::initializer_list<std::pair<const char*, Value>> kv) {
  Value v = Value::table();
  for (const auto& [k, x] : kv) v[k] = x;
  return v;
}

void require_ok(const WorkloadResult& r) {
  std::string why = r.error;
  for (const auto& w : r.workers)
    if (!w.error.empty()) why += "\n  " + w.name + ": " + w.error + "\n" + w.traceback;
  REQUIRE_MESSAGE(r.ok, why);
}

}  // namespace

TEST_CASE("write_bw: 64 B inline and 64 KiB, data checked by the target") {
  Pair p;
  auto r = run(p.tb, "builtin:write_bw", args({{"size", 64}, {"iterations", 2000}, {"inline", 64}, {"cq_mod", 16}}));
  require_ok(r);
  CHECK(r.summary.number_or("bw_avg", 0) > 0);
  CHECK(r.summary.number_or("msg_rate", 0) > 0);
  CHECK(r.workers[1].result.find("runs")->array()[0].find("checked")->as_bool());
  MESSAGE(r.summary.string_or("text", ""));
  r = run(p.tb, "builtin:write_bw", args({{"size", "64KiB"}, {"iterations", 300}}));
  require_ok(r);
  CHECK(r.summary.number_or("size", 0) == 65536);
  CHECK(r.summary.number_or("bw_peak", 0) >= r.summary.number_or("bw_avg", 0) * 0.99);
}

TEST_CASE("write_bw: bidirectional, post lists, a size sweep, duration mode") {
  Pair p;
  auto r = run(p.tb, "builtin:write_bw", args({{"size", 4096}, {"iterations", 500}, {"bidirectional", true},
                                              {"post_list", 4}, {"cq_mod", 8}}));
  require_ok(r);
  CHECK(r.summary.number_or("iterations", 0) == 1000);  // both directions
  Value sizes = Value::table();
  for (int s : {2, 1024, 65536}) sizes.push_back(s);
  r = run(p.tb, "builtin:write_bw", args({{"sizes", sizes}, {"iterations", 200}}));
  require_ok(r);
  REQUIRE(r.summary.find("runs")->array().size() == 3);
  MESSAGE(r.summary.string_or("text", ""));
  r = run(p.tb, "builtin:write_bw", args({{"size", 8192}, {"duration", 0.5}}));
  require_ok(r);
  CHECK(r.summary.number_or("seconds", 0) >= 0.45);
}

TEST_CASE("send_bw: checked receives; bidirectional; SRQ; events; a CQ shared by both workers") {
  {
    Pair p;
    auto r = run(p.tb, "builtin:send_bw", args({{"size", 4096}, {"iterations", 1000}, {"rx_depth", 128}}));
    require_ok(r);
    const Value& rx = r.workers[1].result;
    CHECK(rx.number_or("rx_iterations", 0) == 1000);
    CHECK(rx.number_or("checked", 0) == 1000);
    r = run(p.tb, "builtin:send_bw", args({{"size", 1024}, {"iterations", 500}, {"bidirectional", true}}));
    require_ok(r);
    CHECK(r.workers[0].result.number_or("checked", 0) == 500);
    CHECK(r.workers[1].result.number_or("checked", 0) == 500);
    r = run(p.tb, "builtin:send_bw", args({{"size", 256}, {"duration", 0.5}}));
    require_ok(r);
    CHECK(r.workers[1].result.number_or("rx_iterations", 0) == r.workers[0].result.number_or("iterations", -1));
  }
  {
    Pair p({.srq = true});
    auto r = run(p.tb, "builtin:send_bw", args({{"size", 2048}, {"iterations", 500}, {"rx_depth", 256}}));
    require_ok(r);
    CHECK(r.workers[1].result.number_or("checked", 0) == 500);
  }
  {
    Pair p({.channels = true});
    auto r = run(p.tb, "builtin:send_bw", args({{"size", 512}, {"iterations", 300}, {"events", true}}));
    require_ok(r);
  }
  {
    Pair p({.shared_cq = true});
    auto r = run(p.tb, "builtin:send_bw", args({{"size", 512}, {"iterations", 500}, {"imm", 77}}));
    require_ok(r);
    CHECK(r.workers[1].result.number_or("checked", 0) == 500);
  }
}

TEST_CASE("read_bw and atomic_bw (fetch-add and compare-swap), checked") {
  Pair p;
  auto r = run(p.tb, "builtin:read_bw", args({{"size", 16384}, {"iterations", 300}, {"tx_depth", 16}}));
  require_ok(r);
  CHECK(r.workers[0].result.find("checked")->as_bool());
  r = run(p.tb, "builtin:atomic_bw", args({{"iterations", 1000}, {"tx_depth", 16}}));
  require_ok(r);
  CHECK(r.workers[1].result.number_or("counter", 0) == 1000);
  r = run(p.tb, "builtin:atomic_bw", args({{"iterations", 200}, {"op", "cas"}, {"swap", 5}}));
  require_ok(r);
  CHECK(r.workers[1].result.number_or("counter", 0) == 5);
}

TEST_CASE("send_lat, write_lat, read_lat: percentiles, data checked") {
  for (std::string test : {"builtin:send_lat", "builtin:write_lat", "builtin:read_lat"}) {
    CAPTURE(test);
    Pair p;
    auto r = run(p.tb, test, args({{"size", 64}, {"iterations", 500}}));
    require_ok(r);
    const Value& s = r.summary;
    CHECK(s.number_or("samples", 0) == 500);
    CHECK(s.number_or("t_min", 0) > 0);
    CHECK(s.number_or("t_min", 0) <= s.number_or("t_typical", 0));
    CHECK(s.number_or("t_typical", 0) <= s.number_or("p99", 0));
    CHECK(s.number_or("p99", 0) <= s.number_or("p999", 0));
    CHECK(s.number_or("checked", 0) > 0);
    MESSAGE(s.string_or("text", ""));
  }
  // Duration mode: the initiator stops at the deadline, the target once it has been quiet past
  // it (write_lat runs the direct write loop here, send_lat the general one).
  for (std::string test : {"builtin:send_lat", "builtin:write_lat"}) {
    CAPTURE(test);
    Pair p;
    auto r = run(p.tb, test, args({{"size", 32}, {"duration", 0.5}}));
    require_ok(r);
    CHECK(r.summary.number_or("iterations", 0) > 10);
    CHECK(r.summary.number_or("t_typical", 0) > 0);
  }
}

// The "i, value" lines after each "#, usec" header of a report text, one list per header.
std::vector<std::vector<double>> time_lists(const std::string& text) {
  std::vector<std::vector<double>> lists;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line == "#, usec") {
      lists.emplace_back();
    } else if (!lists.empty() && line.find(", ") != std::string::npos && line[0] != ' ') {
      lists.back().push_back(std::stod(line.substr(line.find(", ") + 2)));
    }
  }
  return lists;
}

TEST_CASE("write_lat unsorted and histogram: every iteration's time, in order, then sorted, as perftest -U/-H") {
  Pair p;
  auto r = run(p.tb, "builtin:write_lat", args({{"size", 8}, {"iterations", 300}, {"unsorted", true}, {"histogram", true}}));
  require_ok(r);
  auto lists = time_lists(r.summary.string_or("text", ""));
  REQUIRE(lists.size() == 2);
  CHECK(lists[0].size() == 300);
  auto sorted = lists[0];
  std::sort(sorted.begin(), sorted.end());
  CHECK(lists[1] == sorted);
  CHECK(sorted.front() == doctest::Approx(r.summary.number_or("t_min", 0)).epsilon(1e-5));
  CHECK(sorted.back() == doctest::Approx(r.summary.number_or("t_max", 0)).epsilon(1e-5));
}

TEST_CASE("without unsorted or histogram, a latency report has no per-iteration lines") {
  Pair p;
  auto r = run(p.tb, "builtin:send_lat", args({{"size", 8}, {"iterations", 50}}));
  require_ok(r);
  CHECK_FALSE(contains(r.summary.string_or("text", ""), "#, usec"));
}

TEST_CASE("a context per side: each QP sees only its own side's MR as local, and traffic is checked") {
  Pair p({.context_per_side = true});
  CHECK(p.tb["a"].local_mrs.count("ma") == 1);
  CHECK(p.tb["a"].local_mrs.count("mb") == 0);
  CHECK(p.tb["b"].local_mrs.count("mb") == 1);
  CHECK(p.tb["b"].local_mrs.count("ma") == 0);
  CHECK(p.tb["a"].remote_mrs.count("mb") == 1);
  CHECK(p.tb["a"].pd != p.tb["b"].pd);
  for (std::string test : {"builtin:write_lat", "builtin:send_bw"}) {
    CAPTURE(test);
    auto r = run(p.tb, test, args({{"size", 64}, {"iterations", 300}}));
    require_ok(r);
    CHECK(r.summary.number_or("iterations", 0) == 300);
  }
}

TEST_CASE("UD: send_bw and send_lat with GRH room") {
  Pair p({.type = "UD"});
  auto r = run(p.tb, "builtin:send_bw", args({{"size", 1024}, {"iterations", 500}, {"tx_depth", 16}}));
  require_ok(r);
  CHECK(r.workers[1].result.number_or("checked", 0) == 500);
  r = run(p.tb, "builtin:send_lat", args({{"size", 256}, {"iterations", 300}}));
  require_ok(r);
}

TEST_CASE("examples: mixed read/write bursts through the per-WR hook") {
  Pair p;
  auto r = run(p.tb, "builtin:examples/mixed_burst", args({}));
  require_ok(r);
  CHECK(r.summary.number_or("writes", 0) == 2250);
  CHECK(r.summary.number_or("reads", 0) == 750);
  CHECK(r.workers[1].result.number_or("chunks_checked", 0) == 16);
}

TEST_CASE("the per-WR hook: once per WR in order, up to depth ahead, false ends it, errors name the line") {
  // Calls are made in runs (one protected call per run), which the script cannot tell apart
  // from one call per WR: the same indexes, in order, never more than depth ahead of posting.
  Pair p;
  auto r = run(p.tb,
               "function initiator(w)\n"
               "  local seen, W, R = {}, qpo.op.write, qpo.op.read\n"
               "  local res = w.qp:stream{op = 'write', size = 64, iterations = 100, depth = 8, signal_every = 4,\n"
               "    mr = 'ma', remote = 'mb', hook = function(i)\n"
               "      seen[#seen + 1] = i\n"
               "      if i == 41 then return false end\n"
               "      if i % 3 == 0 then return 'read', 64, 4096, 64 * (i % 8) end\n"
               "      if i % 3 == 1 then return W, 32 end\n"
               "    end}\n"
               "  for k, i in ipairs(seen) do assert(i == k, 'call ' .. k .. ' saw ' .. i) end\n"
               "  return {calls = res.hook_calls, seen = #seen, ops = res.iterations}\n"
               "end\n",
               args({}), false);
  require_ok(r);
  const Value& res = r.workers[0].result;
  CHECK(res.number_or("calls", 0) == 41);
  CHECK(res.number_or("seen", 0) == 41);
  CHECK(res.number_or("ops", 0) >= 40);  // plus one closing WR when the end fell on an unsignaled run
  CHECK(res.number_or("ops", 0) <= 41);

  struct Bad {
    const char* body;
    const char* error;
  };
  for (Bad b : {Bad{"if i == 20 then error('boom at ' .. i) end", "inline.lua:3: boom at 20"},
                Bad{"if i == 5 then return 'teleport' end", "stream hook: unknown op 'teleport'"},
                Bad{"if i == 7 then return 99 end", "stream hook: bad op code"}}) {
    CAPTURE(b.error);
    Pair q;
    r = run(q.tb,
            std::string("function initiator(w)\n"
                        "  w.qp:stream{op = 'write', size = 64, iterations = 50, depth = 16, mr = 'ma', remote = 'mb',\n"
                        "    hook = function(i) ") +
                b.body + " end}\nend\n",
            args({}), false);
    CHECK_FALSE(r.ok);
    CHECK_MESSAGE(contains(r.error, b.error), r.error);
  }
}

TEST_CASE("examples: UD incast, three senders into one receiver") {
  Testbed tb;
  tb.add_mr("m", kMr);
  tb.add_cq("cr", 8192);
  tb.add_qp("r", {"UD", "cr", "cr"});
  for (const char* s : {"s1", "s2", "s3"}) {
    tb.add_cq(std::string("c") + s, 1024);
    tb.add_qp(s, {"UD", std::string("c") + s, std::string("c") + s});
    tb.connect(s, "r");
  }
  WorkloadSpec spec;
  spec.script = "builtin:examples/ud_incast";
  spec.args["iterations"] = 1000;
  spec.args["tx_depth"] = 8;
  for (const char* s : {"s1", "s2", "s3"}) spec.workers.push_back({s, "initiator", {s}});
  spec.workers.push_back({"r", "target", {"r"}});
  auto r = qpo::lua::run_workload(spec, tb.endpoints());
  require_ok(r);
  MESSAGE(r.summary.string_or("text", ""));
  CHECK(r.summary.number_or("sent", 0) == 3000);
  CHECK(r.summary.number_or("received", 0) + r.summary.number_or("lost", 0) == 3000);
  CHECK(r.summary.number_or("received", 0) > 0);
  CHECK(r.summary.number_or("checked", 0) == r.summary.number_or("received", -1));
}

TEST_CASE("a bad rkey: the error names the script line, the QP and IBV_WC_REM_ACCESS_ERR; the peer stops") {
  Pair p;
  p.tb["a"].remote_mrs["mb"].rkey ^= 0x5a5a00;
  auto r = run(p.tb, "builtin:write_bw", args({{"size", 4096}, {"iterations", 100}}));
  CHECK_FALSE(r.ok);
  CHECK(contains(r.error, "worker 'a' (initiator): lua/write_bw.lua:"));
  CHECK(contains(r.error, "QP 'a'"));
  CHECK(contains(r.error, "IBV_WC_REM_ACCESS_ERR"));
  CHECK(r.workers[0].status == "IBV_WC_REM_ACCESS_ERR");
  CHECK(r.workers[0].qp == "a");
  CHECK(contains(r.workers[1].error, "broken"));

  // The same failure handled by the script: errors = "return". (A fresh pair: the failed QP
  // is in the error state now.)
  Pair p2;
  p2.tb["a"].remote_mrs["mb"].rkey ^= 0x5a5a00;
  r = run(p2.tb,
          "function initiator(w)\n"
          "  local r = w.qp:stream{op = 'write', size = 64, iterations = 10, mr = 'ma', remote = 'mb', errors = 'return'}\n"
          "  assert(not r.ok and r.status == 'IBV_WC_REM_ACCESS_ERR' and r.qp == 'a', r.error)\n"
          "  assert(r.error:find('inline.lua:2:'), r.error)\n"
          "  return r.status\n"
          "end\n",
          args({}), false);
  require_ok(r);
  CHECK(r.workers[0].result.as_string() == "IBV_WC_REM_ACCESS_ERR");
}

TEST_CASE("the per-WR API: post lists, receives, poll, wait, events, state") {
  Pair p({.channels = true});
  auto r = run(p.tb,
               "function initiator(w)\n"
               "  local qp = w.qp\n"
               "  assert(qp:state() == 'RTS')\n"
               "  local src = qp:mr('ma')\n"
               "  src:fill(5, 0, 4096)\n"
               "  w:barrier('posted')\n"
               "  assert(qp:post_send{ {op = 'send', size = 64, id = 1, signaled = false},\n"
               "                       {op = 'send_imm', size = 64, offset = 64, imm = 9, id = 2},\n"
               "                       {op = 'write', size = 128, remote = 'mb', remote_offset = 8192, id = 3},\n"
               "                       {op = 'faa', remote = 'mb', remote_offset = 16384, add = 5, offset = 1024, id = 4} } == 4)\n"
               "  local got = {}\n"
               "  while #got < 3 do\n"
               "    for _, c in ipairs(qp.send_cq:wait(4, 5)) do assert(c.ok, c.status); got[#got + 1] = c.id end\n"
               "  end\n"
               "  table.sort(got)\n"
               "  assert(table.concat(got, ',') == '2,3,4')\n"
               "  assert(src:u64(1024) == 0)\n"
               "  w:barrier('sent')\n"
               "  return true\n"
               "end\n"
               "function target(w)\n"
               "  local qp = w.qp\n"
               "  local dst = qp:mr('mb')\n"
               "  dst:zero(0, 32768)\n"
               "  assert(qp:post_recv{mr = 'mb', size = 64, offset = 0, id = 100, count = 2} == 2)\n"
               "  qp.recv_cq:notify()\n"
               "  w:barrier('posted')\n"
               "  assert(qp.recv_cq:wait_event(5), 'no completion event')\n"
               "  local got = {}\n"
               "  while #got < 2 do\n"
               "    for _, c in ipairs(qp.recv_cq:poll(8)) do got[#got + 1] = c end\n"
               "  end\n"
               "  assert(got[1].id == 100 and got[1].opcode == 'IBV_WC_RECV' and got[1].byte_len == 64 and got[1].qp == 'b')\n"
               "  assert(got[2].id == 101 and got[2].imm == 9)\n"
               "  assert(dst:check(5, 0, 64))\n"
               "  assert(dst:check(5, 64, 64, 64))\n"
               "  w:barrier('sent')\n"
               "  assert(dst:check(5, 8192, 128))\n"
               "  assert(dst:u64(16384) == 5)\n"
               "  return true\n"
               "end\n",
               args({}));
  require_ok(r);
}

TEST_CASE("the executor's stop flag ends a duration stream early; progress is reported") {
  Pair p;
  std::atomic<bool> stop{false};
  std::atomic<int> progress{0};
  qpo::lua::Callbacks cb;
  cb.stop = &stop;
  cb.progress = [&](const std::string& worker, const qpo::dataplane::StreamProgress& pr) {
    CHECK(worker == "a");
    CHECK(pr.qp == "a");
    ++progress;
  };
  WorkloadSpec spec;
  spec.script = "builtin:write_bw";
  spec.args["size"] = 4096;
  spec.args["duration"] = 30.0;
  spec.args["local_mr"] = "ma";
  spec.args["remote_mr"] = "mb";
  spec.workers = {{"a", "initiator", {"a"}}, {"b", "target", {"b"}}};
  // Stopped once the first progress line came (a second of streaming), not after a fixed wall
  // time: on a loaded machine the workload's setup alone can take longer than any such time.
  qpo::testing::WorkerThread stopper([&] {
    auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(25);
    while (progress.load() == 0 && std::chrono::steady_clock::now() < give_up)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    stop = true;
  });
  auto r = qpo::lua::run_workload(spec, p.tb.endpoints(), cb);
  CHECK(stopper.join() == "");
  require_ok(r);
  CHECK(progress >= 1);
  CHECK(r.summary.number_or("iterations", 0) > 0);
  CHECK(r.summary.number_or("seconds", 30) < 29);  // ended by the flag, before its 30 s
}

TEST_CASE("two workers on one SRQ are refused before anything runs") {
  Testbed tb;
  tb.add_mr("m", kMr);
  tb.add_cq("c", 4096);
  tb.add_srq("s", 256);
  tb.add_qp("a", {"RC", "c", "c"});
  tb.add_qp("b", {"RC", "c", "c", "s"});
  tb.add_qp("c", {"RC", "c", "c"});
  tb.add_qp("d", {"RC", "c", "c", "s"});
  WorkloadSpec spec;
  spec.source = "function run(w) end";
  spec.workers = {{"b", "target", {"b"}}, {"d", "target", {"d"}}};
  auto r = qpo::lua::run_workload(spec, tb.endpoints());
  CHECK(contains(r.error, "both drive QPs of one SRQ"));
}
