#include "report/workload_steps.h"

#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>

namespace qpo::report {

namespace {

// The kinds of step a workload's results belong on, each indexed by the name the step carries.
enum class Owner : char { Script = 's', Op = 'o', Group = 'g' };

std::string key(Owner kind, std::string_view name) { return static_cast<char>(kind) + std::string(name); }

// The key of a step that can own a workload's results, "" for any other step. An op
// workload's detail is "NAME: IBV_WR_..." (exec/op_workloads.cpp detail_of); workload names
// hold no ':' (the schema's name pattern), so NAME ends at the first one.
std::string owner_key(const StepResult& st) {
  if (st.verb == "script") return key(Owner::Script, st.object);
  if (st.verb == "workload group") return key(Owner::Group, st.object);
  if (st.verb == "workload") {
    size_t colon = st.detail.find(':');
    if (colon != std::string::npos) return key(Owner::Op, std::string_view(st.detail).substr(0, colon));
  }
  return "";
}

}  // namespace

size_t attach_workloads(std::vector<StepResult>& steps, const std::vector<std::shared_ptr<const WorkloadResult>>& workloads) {
  size_t looked = 0;
  // The free steps of each key, in step order: every step is looked at once here and at most
  // once more when a workload takes it.
  std::unordered_map<std::string, std::deque<size_t>> free_steps;
  for (size_t i = 0; i < steps.size(); ++i) {
    ++looked;
    if (steps[i].workload) continue;
    std::string k = owner_key(steps[i]);
    if (!k.empty()) free_steps[k].push_back(i);
  }
  for (const auto& w : workloads) {
    // The first free step of the kinds this workload may belong on (a group's line: only its aggregate).
    std::deque<size_t>* first = nullptr;
    for (Owner kind : {Owner::Script, Owner::Op, Owner::Group}) {
      if (kind == Owner::Group && !w->aggregate) continue;
      auto it = free_steps.find(key(kind, w->name));
      if (it == free_steps.end() || it->second.empty()) continue;
      ++looked;
      if (!first || it->second.front() < first->front()) first = &it->second;
    }
    if (!first) continue;
    steps[first->front()].workload = w;
    first->pop_front();
  }
  return looked;
}

}  // namespace qpo::report
