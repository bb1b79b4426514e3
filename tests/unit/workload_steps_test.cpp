// report/workload_steps.h: workloads read back from results find the steps that reported them,
// in time linear in steps + workloads (issue 30 item 9: 60,000 of each took over 20 s).
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "report/workload_steps.h"

using namespace qpo::report;

namespace {

StepResult step(const std::string& verb, const std::string& object, const std::string& detail = "") {
  StepResult s;
  s.verb = verb;
  s.object = object;
  s.detail = detail;
  return s;
}

std::shared_ptr<const WorkloadResult> workload(const std::string& name, bool aggregate = false) {
  auto w = std::make_shared<WorkloadResult>();
  w->name = name;
  w->aggregate = aggregate;
  return w;
}

}  // namespace

TEST_CASE("workload steps: 60,000 workloads find their 60,000 steps, each step looked at a bounded number of times") {
  constexpr size_t kN = 60000;
  std::vector<StepResult> steps;
  std::vector<std::shared_ptr<const WorkloadResult>> workloads;
  for (size_t i = 0; i < kN; ++i) {
    steps.push_back(step("script", "w" + std::to_string(i)));
    workloads.push_back(workload("w" + std::to_string(i)));
  }
  size_t looked = attach_workloads(steps, workloads);
  size_t wrong = 0;
  for (size_t i = 0; i < kN; ++i) wrong += steps[i].workload != workloads[i];
  CHECK(wrong == 0);
  // Searching the steps from the start for every workload looks kN * (kN + 1) / 2 = 1.8e9 times.
  CHECK(looked <= steps.size() + 3 * workloads.size());
}

TEST_CASE("workload steps: a script step by name, an op step by its detail, a group's aggregate by the group") {
  std::vector<StepResult> steps{step("ibv_create_qp", "w"), step("workload", "qa", "op1: IBV_WR_RDMA_WRITE x10, 64 B"),
                                step("workload group", "grp"), step("script", "lua1")};
  auto op = workload("op1"), script = workload("lua1"), group = workload("grp", true), member = workload("grp");
  attach_workloads(steps, {script, op, member, group});
  CHECK_FALSE(steps[0].workload);
  CHECK(steps[1].workload == op);
  CHECK(steps[2].workload == group);  // not `member`: only the aggregate belongs on the group's line
  CHECK(steps[3].workload == script);
}

TEST_CASE("workload steps: one name on two hosts: each workload takes the first step still free, in order") {
  std::vector<StepResult> steps{step("script", "w"), step("script", "x"), step("script", "w")};
  auto w1 = workload("w"), w2 = workload("w"), w3 = workload("w");
  attach_workloads(steps, {w1, w2, w3});
  CHECK(steps[0].workload == w1);
  CHECK(steps[2].workload == w2);
  CHECK_FALSE(steps[1].workload);  // w3 has no step left: it is not shown on another's line
}
