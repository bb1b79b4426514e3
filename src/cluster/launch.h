#pragma once
// How the controller reaches an agent, by the host's `address:` in the scenario:
//   localhost / local / 127.0.0.1 / ::1   a child process `qpo agent --stdio` over pipes
//   tcp://HOST:PORT                       `qpo agent --listen` on that host (token required)
//   anything else                         `ssh -o BatchMode=yes ADDRESS qpo agent --stdio`
// A host with a `launcher:` template is started by it instead, whatever its address:
// "srun -w {host} -N1 {command}" runs `srun -w a -N1 qpo agent --stdio` (util/command_template.h;
// {host} the scenario's host name, {address} its address, {command} the agent command's words).
#include <sys/types.h>

#include <string>
#include <vector>

namespace qpo::cluster {

struct Connection {
  int read_fd = -1, write_fd = -1;
  pid_t pid = -1;           // local child or ssh process; -1 for tcp
  std::string description;  // "local agent (pid 123)", "ssh lab-b", "tcp fd00:1::2:7000"
  void close_all();
};

struct LaunchOptions {
  std::string self_path;            // this qpo binary, for local agents
  std::string agent_command = "qpo";  // what ssh runs on the remote host
  std::string launcher;               // the host's launcher: template ("" = by address)
  std::string host;                   // the host's name in the scenario, for {host}
  // tcp://: how long to keep trying to connect (the agent may still be starting), and the
  // pause between refused attempts. Each host has its own; the controller connects to all at once.
  int connect_budget_ms = 15000;
  int connect_retry_ms = 500;
};

bool is_local_address(const std::string& address);

// Starts or connects to the agent for `address`; returns false with `error` on failure.
bool launch_agent(const std::string& address, const LaunchOptions& o, Connection* c, std::string* error);

// The argv a launcher template makes for one host (template errors are the loader's, Q163).
std::vector<std::string> launcher_argv(const std::string& launcher, const std::string& host, const std::string& address,
                                       const std::string& agent_command);

// Reaps a child without blocking long; returns "exited 0", "killed by signal 9", or "".
std::string reap(pid_t pid, bool wait);

// TCP listener for `qpo agent --listen ADDR:PORT`: binds (loopback unless ADDR says otherwise)
// and returns the listening fd, or -1 with `error`.
int listen_on(const std::string& spec, std::string* error);
// The address a listening socket is bound to: "127.0.0.1:7000", "[::]:7000".
std::string bound_address(int fd);

// The shared secret of --token-file, read the same way by agent and controller: its first
// line without the line end (LF or CRLF) and surrounding blanks, at least 16 characters.
bool read_token_file(const std::string& path, std::string* token, std::string* error);

}  // namespace qpo::cluster
