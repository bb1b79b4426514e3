// qpo agent: one host's part of a multi-host run, for a controller (`qpo run`).
#include <signal.h>

#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cluster/agent.h"
#include "exec/executor.h"

namespace qpo::cli {

Action add_agent(CLI::App& app) {
  struct Options {
    bool stdio = false;
    std::string listen, token_file;
    int reply_timeout_s = 900;
  };
  auto opts = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("agent", "Run one host's part of a scenario for a controller (qpo run)");
  cmd->footer(
      "You rarely start it by hand: `qpo run` starts `qpo agent --stdio` over ssh for every host whose\n"
      "address is an ssh destination, or as a local child for localhost.\n\n"
      "Security model: over --stdio the agent trusts whoever started it, so authentication and\n"
      "encryption are ssh's. --listen is for hosts without ssh: it binds to loopback unless an\n"
      "address is given, and refuses any controller that does not present the shared token from\n"
      "--token-file (at least 16 characters); the traffic itself is not encrypted.\n\n"
      "Example:\n  qpo agent --listen '[::]:7000' --token-file /etc/qpo/token\n"
      "  (the scenario then names the host as  address: tcp://[fd00:1::2]:7000  and qpo run gets --token-file)");
  auto* stdio = cmd->add_flag("--stdio", opts->stdio, "Speak the agent protocol on stdin/stdout");
  auto* listen = cmd->add_option("--listen", opts->listen, "Listen on [ADDR]:PORT (loopback if ADDR is omitted)");
  cmd->add_option("--token-file", opts->token_file, "Shared secret a controller must present (--listen)");
  cmd->add_option("--reply-timeout", opts->reply_timeout_s, "Seconds to wait for the controller at a stage")
      ->check(timeout_range(kMaxTimeoutSeconds, "seconds"))
      ->capture_default_str();
  stdio->excludes(listen);
  return [opts]() {
    // Ctrl-C (the run's whole process group gets it) or SIGTERM: stop at the next step, tear
    // down, and still send the report. A vanished controller is a write error, not a kill.
    struct sigaction sa {};
    sa.sa_handler = [](int) { exec::request_stop(); };
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
    signal(SIGPIPE, SIG_IGN);
    cluster::AgentOptions o;
    o.reply_timeout_ms = opts->reply_timeout_s * 1000;
    if (opts->stdio) return cluster::serve_controller(0, 1, o);
    if (!opts->listen.empty()) return cluster::listen_for_controllers(opts->listen, opts->token_file, o);
    std::cerr << "qpo agent: give --stdio or --listen ADDR:PORT (see --help)\n";
    return static_cast<int>(kSystemError);
  };
}

}  // namespace qpo::cli
