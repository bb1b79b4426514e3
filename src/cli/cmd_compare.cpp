// qpo compare NEW.json BASELINE.json: per workload and figure, the change; exit 1 on a
// regression past the tolerance (cli/compare.h).
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/compare.h"
#include "util/strings.h"

namespace qpo::cli {

Action add_compare(CLI::App& app) {
  struct Options {
    std::string now, baseline, tolerance = "5%";
    OutputOptions out;
  };
  auto opts = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("compare", "Compare two run results (qpo run --format json): the change per workload and figure");
  cmd->footer(
      "Pairs workloads by name (a sweep's runs by size) and compares bw_avg, bw_peak, msg_rate (higher is\n"
      "better) and t_min, t_typical, t_avg, p99, p999, t_max, loss (lower is better). Workloads in one file only\n"
      "are listed, not failed; but when no figure is in both files there is nothing to compare (exit 2).\n"
      "Exit status: 0 no regression, 1 a figure got worse by more than the tolerance, 2 a file cannot be\n"
      "read or holds no run result, or the files have no workload figure in common.\n\n"
      "Example:\n  qpo run --format json scenarios/rc-write-bw-lua.yaml > new.json\n"
      "  qpo compare new.json baseline/rc-write-bw-lua.json --tolerance 10%");
  cmd->add_option("new", opts->now, "The new result (qpo run --format json)")->required();
  cmd->add_option("baseline", opts->baseline, "The result to compare against")->required();
  cmd->add_option("--tolerance", opts->tolerance, "How much worse a figure may get before it is a regression, in % of the baseline")
      ->capture_default_str();
  add_output_options(*cmd, opts->out);
  return [opts]() {
    auto tolerance = compare::parse_tolerance(opts->tolerance);
    if (!tolerance) {
      std::cerr << "qpo compare: --tolerance " << util::printable(opts->tolerance, 200) << ": expected a percentage like 5%\n";
      return static_cast<int>(kSystemError);
    }
    std::string error;
    auto now = compare::read_results(opts->now, &error);
    auto baseline = now ? compare::read_results(opts->baseline, &error) : std::nullopt;
    if (!now || !baseline) {
      std::cerr << "qpo compare: " << error << "\n";
      return static_cast<int>(kSystemError);
    }
    auto c = compare::compare(*now, *baseline, *tolerance);
    if (opts->out.format == "json") {
      util::JsonWriter w;
      compare::render_json(w, c);
      std::cout << w.str() << "\n";
    } else {
      std::cout << compare::render_text(c);
    }
    if (c.nothing_compared()) {
      if (opts->out.format == "json") std::cerr << "qpo compare: " << compare::nothing_to_compare(c) << "\n";
      return static_cast<int>(kSystemError);
    }
    return c.regressions() ? static_cast<int>(kInvalid) : static_cast<int>(kOk);
  };
}

}  // namespace qpo::cli
