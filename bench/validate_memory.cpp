// Heap held after each phase of validating one scenario file, in one process (issue 30 item
// 10: page faults were a fifth of `qpo validate`'s time on 10,000 hand-written QPs, so the
// memory each phase keeps is what to watch). Counted by malloc (mallinfo2), not timed:
//   build/bench/qpo_bench_validate_memory FILE.yaml
// bench/validate_scale.sh writes such files (its `hand` form).
#include <malloc.h>

#include <cstdio>

#include "check/validate.h"
#include "plan/plan.h"
#include "scenario/loader.h"
#include "scenario/yaml_parse.h"
#include "util/input_file.h"

namespace {
size_t held() { return mallinfo2().uordblks; }
size_t mib(size_t bytes) { return bytes >> 20; }
}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s SCENARIO.yaml\n", argv[0]);
    return 2;
  }
  auto file = qpo::util::read_input_file(argv[1], qpo::util::kScenarioInput);
  if (!file) {
    std::fprintf(stderr, "%s\n", file.error.c_str());
    return 2;
  }
  size_t base = held();
  {
    auto parsed = qpo::scenario::parse_yaml(file.text);
    std::printf("YAML tree alone:     %4zu MiB held (arena %zu MiB)\n", mib(held() - base), mib(parsed.tree->bytes()));
  }
  qpo::util::SourceText src(argv[1], file.text);
  qpo::diag::DiagSink sink;
  base = held();
  auto s = qpo::scenario::load_scenario(src, sink);
  if (!s || sink.has_errors()) {
    std::fprintf(stderr, "%s does not load without errors\n", argv[1]);
    return 1;
  }
  std::printf("scenario model:      %4zu MiB held (%zu QPs)\n", mib(held() - base), s->qps.size());
  auto checked = qpo::check::validate(std::move(*s), sink);
  std::printf("+ validated:         %4zu MiB held\n", mib(held() - base));
  auto plan = qpo::plan::build_plan(checked);
  std::printf("+ plan:              %4zu MiB held\n", mib(held() - base));
  return 0;
}
