#include "cli/commands.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>

namespace qpo::cli {

void add_output_options(CLI::App& cmd, OutputOptions& out) {
  out.color = isatty(STDERR_FILENO) != 0;
  cmd.add_option("--format", out.format, "Output format")->check(CLI::IsMember({"text", "json"}))->capture_default_str();
  cmd.add_flag("--color,!--no-color", out.color, "Color diagnostics (default: when stderr is a terminal)");
}

CLI::Validator timeout_range(int max, const std::string& unit) {
  return CLI::Validator(
      [max, unit](std::string& text) -> std::string {
        std::string range = "give 1 to " + std::to_string(max) + " " + unit;
        char* end = nullptr;
        errno = 0;
        long long v = std::strtoll(text.c_str(), &end, 10);
        if (text.empty() || *end != '\0' || errno == ERANGE) return "'" + text + "' is not a whole number; " + range;
        if (v < 1 || v > max) return text + " is out of range; " + range;
        return "";
      },
      "1.." + std::to_string(max));
}

}  // namespace qpo::cli
