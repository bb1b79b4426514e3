#include "plan/declared_waits.h"

#include <algorithm>
#include <map>

namespace qpo::plan {

namespace {

// A script workload's `duration:` (seconds, the built-ins' time mode), once per size it runs
// (`sizes:` a list, or "all": perftest -a's 23 powers of two from 2 B to 8 MiB).
uint64_t script_duration_ms(const WorkloadRun& w) {
  const lua::Value* duration = w.script.args.find("duration");
  if (!w.params.is_script() || !duration || !duration->is_number() || duration->as_number() <= 0) return 0;
  double sizes = 1;
  if (const lua::Value* list = w.script.args.find("sizes"))
    sizes = list->is_string() && list->as_string() == "all" ? 23 : std::max<double>(1, static_cast<double>(list->array().size()));
  return static_cast<uint64_t>(duration->as_number() * sizes * 1000.0);
}

}  // namespace

uint64_t declared_wait_ms(const Plan& p, const Step& s, const WaitDefaults& d) {
  switch (s.kind) {
    case StepKind::Workload: {
      if (s.extra().workload < 0) return 0;
      const auto& w = p.workload_of(s);
      // Serving a perftest bandwidth client, qpo waits (up to the phase timeout) for the tool's
      // whole run to end before its hand-shake comes; with -R any side starts with the keys
      // hand-shakes after the CM connection, which wait for the tool.
      if (const auto* e = w.external.empty() ? nullptr : p.external(w.external);
          e && e->perftest() && (e->qpo_listens() || e->test_over_cm))
        return d.phase_timeout_ms;
      // op recv waits up to the phase timeout for a sender outside the scenario to begin.
      if (w.params.op == util::Op::Recv) return d.phase_timeout_ms;
      return script_duration_ms(w);
    }
    case StepKind::Pause:
      return s.extra().pause_ms;
    case StepKind::WaitEvent:
      return s.extra().within_ms ? s.extra().within_ms : d.event_timeout_ms;
    case StepKind::ForbidEvent:
      return s.extra().within_ms;
    case StepKind::ExternalExchange:  // the tool may take the whole phase timeout to connect or answer
    case StepKind::ExternalReply:
      return d.phase_timeout_ms;
    default:
      break;
  }
  // The rdma_cm step that ends in the expected outcome waits up to its `within`.
  if (const CmEnd* end = p.cm_end_of(s); end && !s.expect.empty())
    return end->within_ms ? end->within_ms : d.phase_timeout_ms;
  return 0;
}

uint64_t longest_stage_wait_ms(const Plan& p, const WaitDefaults& d) {
  uint64_t longest = 0;
  for (const auto& h : p.hosts) {
    std::map<int, uint64_t> per_stage;
    for (const auto& s : h.steps)
      if (uint64_t ms = declared_wait_ms(p, s, d)) longest = std::max(longest, per_stage[s.stage] += ms);
  }
  return longest;
}

}  // namespace qpo::plan
