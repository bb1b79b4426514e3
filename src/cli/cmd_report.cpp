// qpo report RESULTS.json... -o FILE.html: the HTML report of saved run results (qpo run
// --format json), re-rendered without re-running.
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/html_report.h"
#include "util/strings.h"

namespace qpo::cli {

Action add_report(CLI::App& app) {
  struct Options {
    std::vector<std::string> files;
    std::string output, scenario;
  };
  auto opts = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("report", "Write the HTML report of saved run results (qpo run --format json)");
  cmd->footer(
      "The page qpo run --report writes, from results saved earlier: one run's page, or a suite's page when\n"
      "the files hold several runs (a file may hold a list of runs, as `jq -s` makes). The scenario's text is\n"
      "read from the file the results name (or --scenario), when it is there and loads as a scenario.\n"
      "Exit status: 0 written, 2 a file cannot be read or holds no run result, or the page cannot be written.\n\n"
      "Example:\n  qpo run --format json scenarios/rc-write-lat-lua.yaml > lat.json\n  qpo report lat.json -o lat.html");
  cmd->add_option("results", opts->files, "Run results (qpo run --format json)")->required();
  cmd->add_option("-o,--output", opts->output, "The HTML file to write")->required();
  cmd->add_option("--scenario", opts->scenario, "The scenario file the run ran (default: the file the results name)");
  return [opts]() {
    std::vector<report::RunReport> runs;
    for (const auto& f : opts->files) {
      std::string error;
      if (!read_run_results(f, &runs, &error)) {
        std::cerr << "qpo report: " << error << "\n";
        return static_cast<int>(kSystemError);
      }
    }
    if (runs.empty()) {
      std::cerr << "qpo report: no run results in " << util::printable(opts->files.front(), 1000) << "\n";
      return static_cast<int>(kSystemError);
    }
    std::vector<std::string> texts;
    for (const auto& r : runs) {
      std::string why_not;
      texts.push_back(scenario_text_for_report(opts->scenario.empty() || runs.size() > 1 ? r.file : opts->scenario, &why_not));
      if (!why_not.empty()) std::cerr << "qpo report: no scenario text on the page: " << why_not << "\n";
    }
    std::string html;
    if (runs.size() == 1) {
      html = report::render_html(runs[0], texts[0]);
    } else {
      std::vector<report::HtmlRun> pages;
      for (size_t i = 0; i < runs.size(); ++i) pages.push_back({&runs[i], texts[i]});
      html = report::render_html_suite(pages, "qpo: " + std::to_string(runs.size()) + " runs");
    }
    return write_report_file(opts->output, html) ? static_cast<int>(kOk) : static_cast<int>(kSystemError);
  };
}

}  // namespace qpo::cli
