#pragma once
// Each subcommand registers its options on the CLI11 app and returns the exit code:
// 0 success/valid, 1 the input is invalid (or a run failed its expectations), 2 usage or system error.
#include <CLI/CLI.hpp>
#include <functional>

namespace qpo::cli {

enum ExitCode { kOk = 0, kInvalid = 1, kSystemError = 2 };

// Registered command: its action runs after parsing.
using Action = std::function<int()>;

Action add_validate(CLI::App& app);
Action add_plan(CLI::App& app);
Action add_rules(CLI::App& app);
Action add_run(CLI::App& app);
Action add_agent(CLI::App& app);
Action add_test(CLI::App& app);
Action add_devices(CLI::App& app);
Action add_compare(CLI::App& app);
Action add_probe(CLI::App& app);
Action add_report(CLI::App& app);
Action add_packets(CLI::App& app);

// Shared output switches.
struct OutputOptions {
  std::string format = "text";
  bool color = false;
};
void add_output_options(CLI::App& cmd, OutputOptions& out);

// A timeout flag: a whole number from 1 to `max` `unit`s, or a usage error saying so. qpo keeps
// timeouts as milliseconds in an int: a flag in seconds goes up to kMaxTimeoutSeconds (24 days);
// more wrapped around (4294968 s became 704 ms), and 0 or less meant "already timed out".
constexpr int kMaxTimeoutSeconds = 2147483;
CLI::Validator timeout_range(int max, const std::string& unit);

}  // namespace qpo::cli
