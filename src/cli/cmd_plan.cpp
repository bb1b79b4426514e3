// qpo plan FILE: the verbs calls, per host, in order, with attr_masks in words and hex.
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/input.h"
#include "plan/plan.h"
#include "plan/render_stream.h"

namespace qpo::cli {

Action add_plan(CLI::App& app) {
  struct Options {
    std::string file;
    OutputOptions out;
    std::vector<std::string> overrides;
    bool capture = false;
  };
  auto opts = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("plan", "Show the verbs calls a scenario will make, per host, without running them");
  cmd->footer(
      "Every ibv_modify_qp shows cur->next state, attr_mask as IBV_QP_* names and hex, each value\n"
      "(defaults marked [default]) and the rule tables' prediction (ok / EINVAL). Values known only\n"
      "at run time (peer QPN/PSN/GID, auto MTU, random PSN) are shown as such.\n"
      "The scenario is validated first; with errors, the plan is not printed (exit 1); with\n"
      "--format json the diagnostics are printed as `qpo validate --format json` prints them.\n\n"
      "Example:\n  qpo plan scenarios/rc-write-pair.yaml\n  qpo plan --format json scenarios/ud-pair.yaml");
  cmd->add_option("file", opts->file, "Scenario file")->required();
  add_output_options(*cmd, opts->out);
  add_set_option(*cmd, opts->overrides);
  cmd->add_flag("--capture", opts->capture, "With the capture steps `qpo run --capture DIR` adds (before the first QP, first in teardown)");
  return [opts]() {
    std::unique_ptr<LoadedScenario> l;
    if (int code = load_valid(opts->file, opts->out, "fix the errors above to see the plan", &l, opts->overrides)) return code;
    auto p = plan::build_plan(*l->checked, {.capture = opts->capture});
    if (opts->out.format == "json") {
      util::JsonWriter w;
      plan::render_json(w, p);
      std::cout << w.str() << "\n";
    } else {
      plan::render_text(std::cout, p);
    }
    return static_cast<int>(kOk);
  };
}

}  // namespace qpo::cli
