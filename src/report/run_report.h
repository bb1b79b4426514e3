#pragma once
// What a run did, step by step, and its verdict. Filled by the executor; rendered as a
// concise log (text) or JSON. Kept free of verbs types so every layer can use it.
#include <string>
#include <vector>

#include "util/json_writer.h"

namespace qpo::report {

enum class StepStatus { Ok, Failed, ExpectedFailure, Skipped, Warning, Info };
const char* status_name(StepStatus s);

struct StepResult {
  std::string host;
  std::string phase;
  std::string verb;
  std::string object;
  std::string detail;      // "INIT->RTR mask=0x129181 (IBV_QP_STATE|...)"
  StepStatus status = StepStatus::Ok;
  int err = 0;             // errno when the verb failed
  double micros = 0;
  std::string message;     // why it failed, or what was checked
};

enum class Verdict { Pass, Fail, Unsupported, Error };
const char* verdict_name(Verdict v);

struct RunReport {
  std::string scenario, file;
  std::string device;      // device names used, for the summary
  std::vector<StepResult> steps;
  Verdict verdict = Verdict::Pass;
  std::string reason;      // one line: why not pass
  std::vector<std::string> disagreements;  // rule-table predictions the kernel contradicted
  // Bring-up speed: from the first ibv_create_qp to the last bring-up ibv_modify_qp.
  size_t qps_at_rts = 0;
  double bringup_seconds = 0;

  StepResult& add(StepResult s) {
    steps.push_back(std::move(s));
    return steps.back();
  }
  void fail(const std::string& why) {
    if (verdict == Verdict::Pass) {
      verdict = Verdict::Fail;
      reason = why;
    }
  }
};

// One line per step: "  12 bring-up  ibv_modify_qp  qa  INIT->RTR mask=...  ok  35 us"
std::string render_text(const RunReport& r, bool verbose);
void render_json(util::JsonWriter& w, const RunReport& r);
// Process exit code: 0 pass, 1 fail, 77 unsupported (ctest's skip code), 2 error.
int exit_code(const RunReport& r);

}  // namespace qpo::report
