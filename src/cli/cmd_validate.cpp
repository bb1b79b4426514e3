// qpo validate FILE...: every problem in every file, in one run.
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "check/provider.h"
#include "cli/input.h"
#include "cli/matrix_check.h"
#include "cli/provider_source.h"
#include "diag/render.h"
#include "util/json_writer.h"
#include "util/strings.h"

namespace qpo::cli {

namespace {
struct ValidateOptions {
  std::vector<std::string> files;
  OutputOptions out;
  bool strict = false;
  bool quiet = false;
  std::vector<std::string> overrides;
  std::string provider;  // --provider NAME|FILE[:NAME]
};
}  // namespace

Action add_validate(CLI::App& app) {
  auto opts = std::make_shared<ValidateOptions>();
  auto* cmd = app.add_subcommand("validate", "Check scenario files against the verbs rule tables, without hardware");
  cmd->footer(
      "Reports every problem at once: stable code, file:line:col, YAML path, the rule broken and a hint.\n"
      "Exit status: 0 valid, 1 invalid, 2 usage or system error (e.g. unreadable file).\n"
      "Codes: Q1xx structure, Q2xx references, Q3xx state machine (kernel qp_state_table), Q4xx values,\n"
      "Q5xx cross-QP (peers, PSNs, MTU, access for workloads), Q6xx capacity, Q7xx script workloads.\n"
      "See docs/diagnostics.md.\n\n"
      "Example:\n  qpo validate scenarios/*.yaml\n  qpo validate --format json my.yaml | jq '.files[].diagnostics[].code'");
  cmd->add_option("files", opts->files, "Scenario files ('-' reads stdin)")->required();
  add_output_options(*cmd, opts->out);
  cmd->add_flag("--strict", opts->strict, "Treat warnings as errors");
  cmd->add_flag("-q,--quiet", opts->quiet, "Print only problems, no per-file summary");
  add_set_option(*cmd, opts->overrides);
  cmd->add_option("--provider", opts->provider,
                  "Also warn (Q308) where this provider refuses a step: a name in schemas/providers.yaml (rxe) or a "
                  "file qpo probe --out wrote (FILE or FILE:NAME)");
  return [opts]() {
    std::optional<ProviderSource> provider;
    if (!opts->provider.empty()) {
      try {
        provider = resolve_provider(opts->provider);
      } catch (const std::exception& e) {
        std::cerr << "qpo: --provider: " << util::printable(e.what()) << "\n";
        return static_cast<int>(kSystemError);
      }
    }
    int worst = kOk;
    util::JsonWriter json;
    bool as_json = opts->out.format == "json";
    if (as_json) json.begin_object().key("files").begin_array();
    for (const auto& file : opts->files) {
      auto l = load_and_validate(file, opts->overrides);
      check_matrix(file, opts->overrides, *l);  // every combination of its matrix, if it has one
      if (provider && l->checked) {
        check::check_provider(l->checked->model(), provider->entry, provider->origin, l->diags);
        l->diags.sort();
      }
      size_t errors = l->diags.error_count(), warnings = l->diags.warning_count();
      bool invalid = errors > 0 || (opts->strict && warnings > 0);
      if (l->read_failed) worst = kSystemError;
      else if (invalid && worst == kOk) worst = kInvalid;
      if (as_json) {
        render_file_json(json, file, *l, invalid);
        continue;
      }
      if (l->read_failed) {
        std::cerr << "qpo: " << util::printable(l->read_error) << "\n";
        continue;
      }
      print_diagnostics(*l, opts->out.color);
      if (!opts->quiet) {
        std::cout << util::printable(file, 1000) << ": " << (invalid ? "invalid" : "valid");
        if (errors || warnings)
          std::cout << " (" << errors << (errors == 1 ? " error, " : " errors, ") << warnings
                    << (warnings == 1 ? " warning)" : " warnings)");
        std::cout << "\n";
      }
    }
    if (as_json) {
      json.end_array().end_object();
      std::cout << json.str() << "\n";
    }
    return worst;
  };
}

}  // namespace qpo::cli
