#pragma once
// Rendering of a script workload's results (run_report.h WorkloadResult): the perftest-style
// table and the thresholds in the text log, structured fields in JSON.
#include <string>

#include "report/run_report.h"

namespace qpo::report {

// Lines indented by `indent`: a rule, the table, a rule, then one line per threshold
// ("min_bw 40 MB/s: bw_avg 66.54 MB/s  ok"). Without a table, the summary's fields.
std::string render_workload_text(const WorkloadResult& w, const std::string& indent);
void render_workload_json(util::JsonWriter& j, const WorkloadResult& w);

}  // namespace qpo::report
