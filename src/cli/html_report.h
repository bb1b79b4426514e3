#pragma once
// The --report FILE.html option of qpo run and qpo test, and the files it writes
// (report/html_page.h renders the page).
#include <string>
#include <vector>

#include "report/html_page.h"

namespace qpo::cli {

// FILE as an absolute path (the lab guest writes it under the same path), "" for "".
std::string absolute_report_path(const std::string& file);
// {"--out", DIR}: lab.sh's results folder, shared by host and guest, for FILE's directory.
std::vector<std::string> report_lab_args(const std::string& absolute_file);
// Writes `text` to `file` (util/output_file.h: a regular file is replaced through a new file
// beside it, a device or FIFO written through, anything else refused). On failure prints
// "qpo: OPTION FILE: why" and returns false.
bool write_report_file(const std::string& file, const std::string& text, const char* option = "--report");
// The runs of a results file: an object (qpo run --format json) or a list of them (jq -s);
// false with `error` naming the file when it holds something else.
bool read_run_results(const std::string& path, std::vector<report::RunReport>* out, std::string* error);
// The same from the file's text (strict JSON, util/json_reader.h): `error` names the file, and
// for JSON that is not a run result, the key it lacks and what it looks like instead.
bool parse_run_results(const std::string& text, const std::string& path, std::vector<report::RunReport>* out,
                       std::string* error);
// The text of the scenario file `path` for a report page, "" unless it is a regular file
// within the scenario cap that loads as a scenario: a results file may name any file
// ("file": "/proc/self/environ"), and the page is made to be shared. `why_not`, when given,
// says why nothing is shown.
std::string scenario_text_for_report(const std::string& path, std::string* why_not = nullptr);

}  // namespace qpo::cli
