// libFuzzer target: bytes -> SourceText -> load_scenario -> validate -> (no errors) build_plan,
// rendered as text and JSON. Diagnostics are rendered too (text with the quoted source line,
// and JSON), since that is what `qpo validate` does with every finding.
//
// Beyond "no crash, no sanitizer report, no escaping exception", it checks the contract the
// CLI relies on:
//   - load_scenario returns nullopt only with an error in the sink;
//   - every diagnostic code is Q1xx..Q7xx (or Q999, the overflow marker), docs/diagnostics.md;
//   - a scenario that validates without errors plans without throwing.
// A violation calls __builtin_trap(), which libFuzzer reports as a crash with the input.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "check/validate.h"
#include "diag/diagnostic.h"
#include "diag/render.h"
#include "plan/plan.h"
#include "scenario/loader.h"
#include "util/json_writer.h"
#include "util/source_text.h"

namespace {

// Q1xx..Q7xx, and Q999 ("too many problems", docs/diagnostics.md).
bool valid_code(const std::string& c) {
  if (c == "Q999") return true;
  return c.size() == 4 && c[0] == 'Q' && c[1] >= '1' && c[1] <= '7' && c[2] >= '0' && c[2] <= '9' &&
         c[3] >= '0' && c[3] <= '9';
}

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "fuzz_scenario: invariant broken: %s\n", what);
  __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Scenario files are capped at 64 MiB by the CLI; the fuzzer's -max_len keeps inputs far
  // smaller, but be explicit so a huge corpus file cannot turn into a slow-unit report.
  if (size > (1u << 20)) return -1;
  qpo::util::SourceText source("fuzz.yaml", std::string(reinterpret_cast<const char*>(data), size));
  qpo::diag::DiagSink sink;
  auto scenario = qpo::scenario::load_scenario(source, sink);
  if (!scenario && !sink.has_errors()) fail("load_scenario returned nullopt without an error");
  std::optional<qpo::check::Checked> checked;
  if (scenario) checked = qpo::check::validate(*scenario, sink);
  sink.sort();

  qpo::diag::Sources sources{{source.name(), &source}};
  qpo::util::JsonWriter diag_json;
  diag_json.begin_array();
  size_t text_bytes = 0;
  for (const auto& d : sink.all()) {
    if (!valid_code(d.code)) fail("diagnostic code outside Q100..Q799 and Q999");
    text_bytes += qpo::diag::render_text(d, sources, /*color=*/false).size();
    text_bytes += qpo::diag::render_text(d, sources, /*color=*/true).size();
    qpo::diag::render_json(diag_json, d);
  }
  diag_json.end_array();

  if (scenario && !sink.has_errors()) {
    auto plan = qpo::plan::build_plan(*checked);
    text_bytes += qpo::plan::render_text(plan).size();
    qpo::util::JsonWriter w;
    qpo::plan::render_json(w, plan);
    text_bytes += w.str().size();
  }
  // Keep the renderings observable so nothing above is optimised away.
  volatile size_t sink_bytes = text_bytes + diag_json.str().size();
  (void)sink_bytes;
  return 0;
}
