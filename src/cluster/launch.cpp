#include "cluster/launch.h"

#include "util/command_template.h"
#include "util/input_file.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <signal.h>
#include <sys/socket.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

namespace qpo::cluster {

void Connection::close_all() {
  if (read_fd >= 0) ::close(read_fd);
  if (write_fd >= 0 && write_fd != read_fd) ::close(write_fd);
  read_fd = write_fd = -1;
}

bool is_local_address(const std::string& a) {
  return a.empty() || a == "localhost" || a == "local" || a == "127.0.0.1" || a == "::1";
}

namespace {

bool spawn(const std::vector<std::string>& argv, Connection* c, std::string* error) {
  // Built before fork: the controller starts agents from several threads at once, and the
  // child of a threaded process should not allocate.
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  int to_child[2] = {-1, -1}, from_child[2] = {-1, -1};
  // On failure, the pipes made so far are closed (hosts are started in parallel, so a fork
  // that fails with EAGAIN must not leave descriptors behind for the next attempt).
  auto fail = [&](const char* what) {
    *error = std::string(what) + ": " + std::strerror(errno);
    for (int fd : {to_child[0], to_child[1], from_child[0], from_child[1]})
      if (fd >= 0) ::close(fd);
    return false;
  };
  if (pipe2(to_child, O_CLOEXEC) != 0 || pipe2(from_child, O_CLOEXEC) != 0) return fail("pipe");
  pid_t pid = fork();
  if (pid < 0) return fail("fork");
  if (pid == 0) {
    dup2(to_child[0], 0);
    dup2(from_child[1], 1);
    execvp(args[0], args.data());
    _exit(127);
  }
  ::close(to_child[0]);
  ::close(from_child[1]);
  c->write_fd = to_child[1];
  c->read_fd = from_child[0];
  c->pid = pid;
  return true;
}

// "[fd00:1::2]:7000", "host:7000" -> host, port
bool split_host_port(const std::string& spec, std::string* host, std::string* port) {
  if (!spec.empty() && spec[0] == '[') {
    auto close = spec.find(']');
    if (close == std::string::npos || close + 1 >= spec.size() || spec[close + 1] != ':') return false;
    *host = spec.substr(1, close - 1);
    *port = spec.substr(close + 2);
    return true;
  }
  auto colon = spec.rfind(':');
  if (colon == std::string::npos) return false;
  *host = spec.substr(0, colon);
  *port = spec.substr(colon + 1);
  return true;
}

using Clock = std::chrono::steady_clock;

int ms_left(Clock::time_point deadline) {
  return static_cast<int>(
      std::max<long long>(0, std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count()));
}

// One attempt: a non-blocking connect that waits until `deadline` at most (a host that is down
// answers nothing, and a blocking connect would wait out the kernel's SYN retries, minutes).
// Returns the connected (blocking) socket, or -1 with `why`.
int connect_once(const addrinfo* ai, Clock::time_point deadline, std::string* why) {
  int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
  if (fd < 0) {
    *why = std::strerror(errno);
    return -1;
  }
  int err = connect(fd, ai->ai_addr, ai->ai_addrlen) == 0 ? 0 : errno;
  if (err == EINPROGRESS) {
    pollfd p{fd, POLLOUT, 0};
    int r;
    while ((r = poll(&p, 1, ms_left(deadline))) < 0 && errno == EINTR) {
    }
    socklen_t len = sizeof err;
    if (r == 0) err = ETIMEDOUT;
    else if (r < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
  }
  if (err == 0 && fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0) err = errno;  // the wire reads block
  if (err != 0) {
    *why = std::strerror(err);
    ::close(fd);
    return -1;
  }
  return fd;
}

// Connects to HOST:PORT, trying again (every `retry_ms`) until `budget_ms` has passed: the
// agent may still be starting on its host. Returns the socket, or -1 with `error`.
int connect_within(const std::string& host, const std::string& port, int budget_ms, int retry_ms, std::string* error) {
  addrinfo hints{}, *res = nullptr;
  hints.ai_socktype = SOCK_STREAM;
  if (int e = getaddrinfo(host.c_str(), port.c_str(), &hints, &res); e != 0) {
    *error = "cannot resolve " + host + ": " + gai_strerror(e);
    return -1;
  }
  auto deadline = Clock::now() + std::chrono::milliseconds(budget_ms);
  std::string last = "no address";
  int fd = -1;
  for (bool first = true; fd < 0; first = false) {
    if (!first) {
      if (ms_left(deadline) == 0) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(std::min(retry_ms, ms_left(deadline))));
    }
    for (auto* ai = res; ai && fd < 0; ai = ai->ai_next) fd = connect_once(ai, deadline, &last);
  }
  freeaddrinfo(res);
  if (fd < 0) *error = last + " (tried for " + std::to_string((budget_ms + 999) / 1000) + " s)";
  return fd;
}

}  // namespace

std::vector<std::string> launcher_argv(const std::string& launcher, const std::string& host, const std::string& address,
                                       const std::string& agent_command) {
  std::string why;
  auto t = util::parse_command_template(launcher, &why);
  if (!t) return {};
  return util::expand_command_template(*t, {{"host", {host}}, {"address", {address}},
                                            {"command", {agent_command, "agent", "--stdio"}}});
}

bool launch_agent(const std::string& address, const LaunchOptions& o, Connection* c, std::string* error) {
  if (!o.launcher.empty()) {
    auto argv = launcher_argv(o.launcher, o.host, address, o.agent_command);
    if (argv.empty()) {
      *error = "the launcher '" + o.launcher + "' is not a command template";
      return false;
    }
    if (!spawn(argv, c, error)) return false;
    c->description = "launcher " + argv[0] + " (pid " + std::to_string(c->pid) + ")";
    return true;
  }
  if (is_local_address(address)) {
    c->description = "local agent";
    if (!spawn({o.self_path, "agent", "--stdio"}, c, error)) return false;
    c->description += " (pid " + std::to_string(c->pid) + ")";
    return true;
  }
  if (address.rfind("tcp://", 0) == 0) {
    std::string host, port;
    if (!split_host_port(address.substr(6), &host, &port)) {
      *error = "bad agent address '" + address + "'; write tcp://HOST:PORT or tcp://[V6ADDR]:PORT";
      return false;
    }
    int fd = connect_within(host, port, o.connect_budget_ms, o.connect_retry_ms, error);
    if (fd < 0) {
      *error = "cannot connect to agent at " + address + ": " + *error;
      return false;
    }
    c->read_fd = c->write_fd = fd;
    c->description = "tcp agent " + host + ":" + port;
    return true;
  }
  c->description = "ssh " + address;
  // BatchMode: never prompt (there is no terminal to answer); keepalives notice dead hosts.
  return spawn({"ssh", "-o", "BatchMode=yes", "-o", "ServerAliveInterval=5", "-o", "ServerAliveCountMax=3", address,
                o.agent_command, "agent", "--stdio"},
               c, error);
}

std::string reap(pid_t pid, bool wait) {
  if (pid <= 0) return "";
  int status = 0;
  pid_t r = waitpid(pid, &status, wait ? 0 : WNOHANG);
  if (r != pid) return "";
  if (WIFEXITED(status)) return "exited " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
  return "ended";
}

int listen_on(const std::string& spec, std::string* error) {
  std::string host, port;
  if (!split_host_port(spec, &host, &port)) {
    host = "";
    port = spec;
  }
  // No address (a bare port, ":7000", "[]:7000"): loopback only, so nothing is exposed unless
  // asked for. "0.0.0.0" or "[::]" say "every interface" in so many words.
  if (host.empty()) host = "127.0.0.1";
  addrinfo hints{}, *res = nullptr;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  if (int e = getaddrinfo(host.empty() ? nullptr : host.c_str(), port.c_str(), &hints, &res); e != 0) {
    *error = "cannot resolve " + host + ": " + gai_strerror(e);
    return -1;
  }
  int fd = socket(res->ai_family, res->ai_socktype | SOCK_CLOEXEC, res->ai_protocol);
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (fd < 0 || bind(fd, res->ai_addr, res->ai_addrlen) != 0 || ::listen(fd, 4) != 0) {
    *error = "cannot listen on " + spec + ": " + std::strerror(errno);
    freeaddrinfo(res);
    if (fd >= 0) ::close(fd);
    return -1;
  }
  freeaddrinfo(res);
  return fd;
}

std::string bound_address(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return "?";
  char host[NI_MAXHOST], port[NI_MAXSERV];
  if (getnameinfo(reinterpret_cast<sockaddr*>(&ss), len, host, sizeof host, port, sizeof port,
                  NI_NUMERICHOST | NI_NUMERICSERV) != 0)
    return "?";
  return ss.ss_family == AF_INET6 ? "[" + std::string(host) + "]:" + port : std::string(host) + ":" + port;
}

bool read_token_file(const std::string& path, std::string* token, std::string* error) {
  auto file = util::read_input_file(path, util::kTokenInput);
  if (!file) {
    *error = file.error;
    return false;
  }
  const std::string& text = file.text;
  // One line: the secret, without the line end an editor adds (LF or CRLF) or blanks around it.
  size_t end = text.find_first_of("\r\n");
  std::string line = text.substr(0, end);
  while (!line.empty() && (line.back() == ' ' || line.back() == '\t')) line.pop_back();
  size_t start = line.find_first_not_of(" \t");
  *token = start == std::string::npos ? "" : line.substr(start);
  if (token->size() < 16) {
    *error = "the token file " + path + " must hold a secret of at least 16 characters on its first line";
    return false;
  }
  return true;
}

}  // namespace qpo::cluster
