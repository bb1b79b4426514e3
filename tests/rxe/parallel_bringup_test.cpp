// The bring-up on several threads (exec/bringup_runner.h) reports what one thread reports:
// the same lines in plan order, the same verdict. Threads share the QPs out (QP i to thread
// i % n) and run their creates and common-case modifies ahead; the session's thread then
// walks the plan. Runs inside the lab guest (a real rxe device).
#include <doctest/doctest.h>

#include <cerrno>
#include <regex>
#include <string>
#include <vector>

#include "check/validate.h"
#include "exec/executor.h"
#include "plan/plan.h"
#include "scenario/loader.h"
#include "util/source_text.h"

namespace {

// 24 RC pairs with receive slots (a post_recv step per QP between its modifies), 2 QPs on an
// SRQ, and `odd`/`even` after them; `odd_rtr` is odd's INIT->RTR attributes.
std::string scenario(const std::string& odd_rtr) {
  return R"(version: 1
name: parallel-bringup
devices: { d: { name: rxe0, port: 1, gid_index: 1 } }
cqs: { c: { device: d, depth: 16384 } }
srqs: { s: { pd: d, max_wr: 64 } }
qps:
  qa: { count: 24, pd: d, type: RC, send_cq: c, recv_cq: c, connect: qb, cap: { max_send_wr: 16, max_recv_wr: 4 },
        states: { INIT: { qp_access_flags: [remote_write] }, RTR: {}, RTS: { sq_psn: 0x1234 } } }
  qb: { count: 24, pd: d, type: RC, send_cq: c, recv_cq: c, connect: qa, cap: { max_send_wr: 16, max_recv_wr: 4 },
        states: { INIT: { qp_access_flags: [remote_write] }, RTR: {}, RTS: { sq_psn: 0x1234 } } }
  sa: { pd: d, type: RC, send_cq: c, recv_cq: c, srq: s, connect: sb, cap: { max_send_wr: 16 },
        states: { INIT: { qp_access_flags: [remote_write] }, RTR: {}, RTS: { sq_psn: 0x1234 } } }
  sb: { pd: d, type: RC, send_cq: c, recv_cq: c, srq: s, connect: sa, cap: { max_send_wr: 16 },
        states: { INIT: { qp_access_flags: [remote_write] }, RTR: {}, RTS: { sq_psn: 0x1234 } } }
  odd: { pd: d, type: RC, send_cq: c, recv_cq: c, connect: even, cap: { max_send_wr: 16, max_recv_wr: 0 },
         states: { INIT: { qp_access_flags: [remote_write] }, RTR: )" +
         odd_rtr + R"(, RTS: { sq_psn: 0x1234 } } }
  even: { pd: d, type: RC, send_cq: c, recv_cq: c, connect: odd, cap: { max_send_wr: 16, max_recv_wr: 0 },
          states: { INIT: { qp_access_flags: [remote_write] }, RTR: {}, RTS: { sq_psn: 0x1234 } } }
)";
}

qpo::report::RunReport run(const std::string& yaml, unsigned threads) {
  qpo::util::SourceText source("parallel-bringup.yaml", yaml);
  qpo::diag::DiagSink sink;
  auto s = qpo::scenario::load_scenario(source, sink);
  REQUIRE(s);
  auto checked = qpo::check::validate(*s, sink);
  REQUIRE_FALSE(sink.has_errors());
  auto plan = qpo::plan::build_plan(checked, {false});
  qpo::exec::RunOptions o;
  o.smoke = false;
  o.bringup_threads = threads;
  return qpo::exec::run_scenario(plan, o);
}

// A line as the report shows it, without its time, and without the QP numbers the exchange
// publishes (each run's QPs get new ones).
std::string line(const qpo::report::StepResult& s) {
  std::string message = s.verb == "publish" ? std::regex_replace(s.message, std::regex("qp_num [0-9]+"), "qp_num N")
                                            : s.message;
  return std::to_string(s.plan_step) + " " + s.phase + " " + s.verb + " " + s.object + " " + s.detail + " " +
         qpo::report::status_name(s.status) + " " + std::to_string(s.err) + " " + message;
}

std::vector<std::string> lines(const qpo::report::RunReport& r) {
  std::vector<std::string> out;
  for (const auto& s : r.steps) out.push_back(line(s));
  return out;
}

}  // namespace

TEST_CASE("four bring-up threads report every line one thread reports, in the same order") {
  auto one = run(scenario("{}"), 1);
  auto four = run(scenario("{}"), 4);
  CHECK(std::string(qpo::report::verdict_name(one.verdict)) == "PASS");
  CHECK(std::string(qpo::report::verdict_name(four.verdict)) == "PASS");
  CHECK(four.qps_at_rts == 52);
  auto a = lines(one), b = lines(four);
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    CAPTURE(i);
    CHECK(b[i] == a[i]);
  }
}

TEST_CASE("a modify the kernel refuses on a thread fails the run at its own step, as with one thread") {
  // rxe refuses an alternate path (schemas/providers.yaml: "with IBV_QP_ALT_PATH"); the rule
  // tables allow it, so the step is predicted ok and a thread runs it ahead.
  auto bad = scenario("{ alt_port_num: 1, alt_timeout: 14, alt_pkey_index: 0, alt_ah_attr: { dlid: 0, port_num: 1 } }");
  auto one = run(bad, 1);
  auto four = run(bad, 4);
  CHECK(std::string(qpo::report::verdict_name(four.verdict)) == "FAIL");
  CHECK(four.reason == one.reason);
  CHECK(four.reason.find("ibv_modify_qp(odd, INIT->RTR") != std::string::npos);
  const qpo::report::StepResult* failed = nullptr;
  int last = 0;
  bool in_teardown = false;
  for (const auto& s : four.steps) {
    if (s.phase == "teardown") in_teardown = true;
    if (!in_teardown) {  // plan order up to teardown
      CHECK(s.plan_step >= last);
      last = s.plan_step;
    }
    if (!failed && s.status == qpo::report::StepStatus::Failed) failed = &s;
  }
  REQUIRE(failed);
  CHECK(failed->object == "odd");
  CHECK(failed->detail.rfind("INIT->RTR", 0) == 0);
  CHECK(failed->err == EINVAL);
  // Every line the single thread reported before the failure is there, in the same order.
  auto a = lines(one), b = lines(four);
  size_t first_failed = 0;
  while (first_failed < a.size() && a[first_failed].find(" FAILED ") == std::string::npos) ++first_failed;
  REQUIRE(first_failed < a.size());
  REQUIRE(b.size() > first_failed);
  for (size_t i = 0; i <= first_failed; ++i) {
    CAPTURE(i);
    CHECK(b[i] == a[i]);
  }
}
