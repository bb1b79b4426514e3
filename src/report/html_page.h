#pragma once
// `qpo run --report FILE.html`: a run as one self-contained HTML page (no network, no external
// script, font or style sheet): the verdict, the scenario's text, the plan's steps with their
// outcome and time, per workload its figures, thresholds, latency histogram and CDF (from every
// sample the run kept), bandwidth against size for sweeps, per-QP bars for groups, and the
// devices' counter deltas. The JSON results of the run are embedded as
// <script type="application/json" id="qpo-results">; the plots carry their data as data-*.
#include <string>
#include <vector>

#include "report/run_report.h"

namespace qpo::report {

struct HtmlRun {
  const RunReport* report = nullptr;
  std::string scenario_text;  // the YAML as run ("" when not at hand)
};

// One run's page.
std::string render_html(const RunReport& r, const std::string& scenario_text);
// A suite's page (qpo test --report): every run one after the other, with a summary at the top.
std::string render_html_suite(const std::vector<HtmlRun>& runs, const std::string& title);

}  // namespace qpo::report
