#include "cli/commands.h"

#include <unistd.h>

namespace qpo::cli {

void add_output_options(CLI::App& cmd, OutputOptions& out) {
  out.color = isatty(STDERR_FILENO) != 0;
  cmd.add_option("--format", out.format, "Output format")->check(CLI::IsMember({"text", "json"}))->capture_default_str();
  cmd.add_flag("--color,!--no-color", out.color, "Color diagnostics (default: when stderr is a terminal)");
}

}  // namespace qpo::cli
