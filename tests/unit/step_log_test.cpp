// The report's log has a place per plan step (RunReport::add, order_new_lines): lines land in
// plan order whatever order their steps finished in, and what was published never moves.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "report/run_report.h"

using qpo::report::RunReport;
using qpo::report::StepResult;

namespace {

StepResult line(int plan_step, const std::string& verb) {
  StepResult r;
  r.plan_step = plan_step;
  r.verb = verb;
  return r;
}

std::string order(const RunReport& r) {
  std::string out;
  for (const auto& s : r.steps) out += std::to_string(s.plan_step) + ":" + s.verb + " ";
  return out;
}

}  // namespace

TEST_CASE("lines added out of plan order are in plan order once ordered; a step's lines keep the order they came in") {
  RunReport r;
  r.add(line(3, "ibv_reg_mr"));
  r.add(line(7, "publish"));               // the exchange's line, named after the window
  r.add(line(5, "ibv_create_qp"));         // the window's lines, named once it closed
  r.add(line(5, "ibv_create_qp granted"));
  r.add(line(6, "ibv_modify_qp"));
  r.order_new_lines();
  CHECK(order(r) == "3:ibv_reg_mr 5:ibv_create_qp 5:ibv_create_qp granted 6:ibv_modify_qp 7:publish ");
}

TEST_CASE("lines ordered once never move: a later line of an earlier step comes after them") {
  RunReport r;
  r.add(line(4, "workload"));
  r.add(line(2, "barrier"));
  r.order_new_lines();  // published
  r.add(line(9, "ibv_destroy_qp"));
  r.add(line(4, "measurement"));
  r.add(line(3, "late"));  // an earlier step than the last one published: after it, not before
  r.order_new_lines();
  CHECK(order(r) == "2:barrier 4:workload 3:late 4:measurement 9:ibv_destroy_qp ");
}

TEST_CASE("a line with no plan step (none was current) sits after the line that came before it") {
  RunReport r;
  r.add(line(12, "ibv_destroy_cq"));
  r.add(line(0, "ibv_destroy_ah"));  // a script's lazy AH, released before the planned teardown
  r.add(line(14, "ibv_dealloc_pd"));
  r.add(line(13, "ibv_dereg_mr"));
  r.order_new_lines();
  CHECK(order(r) == "12:ibv_destroy_cq 0:ibv_destroy_ah 13:ibv_dereg_mr 14:ibv_dealloc_pd ");
}

TEST_CASE("the latest step is the highest plan step any line reports on") {
  RunReport r;
  CHECK(r.latest_step() == 0);
  r.add(line(8, "ibv_create_qp"));
  r.add(line(3, "ibv_reg_mr"));
  CHECK(r.latest_step() == 8);
}

TEST_CASE("a closing line (an abort) comes after every other line of its plan step, also those added after it") {
  RunReport r;
  r.add(line(8, "ibv_create_qp"));
  auto abort = line(10, "abort");
  abort.closes_step = true;
  r.add(abort);
  r.add(line(10, "resolve"));
  r.add(line(9, "publish"));
  r.order_new_lines();
  CHECK(order(r) == "8:ibv_create_qp 9:publish 10:resolve 10:abort ");
}
