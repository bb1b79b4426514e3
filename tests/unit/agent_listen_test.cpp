// qpo agent --listen: where it binds, that it says so, that SIGTERM/SIGINT end it, and that
// both sides read a token file the same way.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "cluster/agent.h"
#include "cluster/launch.h"
#include "cluster/codec.h"
#include "cluster/wire.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

extern char** environ;

namespace {

std::string temp_file(const std::string& content) {
  char path[] = "/tmp/qpo-token-XXXXXX";
  int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  REQUIRE(write(fd, content.data(), content.size()) == static_cast<ssize_t>(content.size()));
  close(fd);
  return path;
}

// `qpo agent --listen SPEC`, its stderr on a pipe; `fault` is its QPO_AGENT_FAULT (agent.cpp).
struct Agent {
  pid_t pid = -1;
  int err = -1;
  Agent(const std::string& spec, const std::string& token_file, const std::string& fault = "") {
    int p[2];
    REQUIRE(pipe(p) == 0);
    std::string fault_env = "QPO_AGENT_FAULT=" + fault;
    std::vector<char*> env;  // made before fork
    for (char** e = environ; *e; ++e) env.push_back(*e);
    if (!fault.empty()) env.push_back(fault_env.data());
    env.push_back(nullptr);
    pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      dup2(p[1], 2);
      close(p[0]);
      execle(QPO_BINARY, QPO_BINARY, "agent", "--listen", spec.c_str(), "--token-file", token_file.c_str(), nullptr,
             env.data());
      _exit(127);
    }
    close(p[1]);
    err = p[0];
  }
  // The first line on stderr (waits for it, up to a minute on a busy machine).
  std::string first_line() {
    std::string line;
    char c;
    pollfd pf{err, POLLIN, 0};
    while (poll(&pf, 1, 60000) > 0 && read(err, &c, 1) == 1 && c != '\n') line += c;
    return line;
  }
  // The first stderr line containing `text`, or "" when none came within a minute.
  std::string line_with(const std::string& text) {
    for (;;) {
      std::string line = first_line();
      if (line.empty() || line.find(text) != std::string::npos) return line;
    }
  }
  // Its threads now (/proc/PID/status), or -1.
  int threads() const {
    std::ifstream status("/proc/" + std::to_string(pid) + "/status");
    std::string key;
    while (status >> key)
      if (key == "Threads:") {
        int n = -1;
        status >> n;
        return n;
      }
    return -1;
  }
  // The exit status after `sig`, or -1 when it is still running after a minute.
  int stop(int sig) {
    kill(pid, sig);
    for (int i = 0; i < 600; ++i) {
      int status = 0;
      if (waitpid(pid, &status, WNOHANG) == pid) {
        pid = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      usleep(100000);
    }
    return -1;
  }
  ~Agent() {
    if (pid > 0) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
    if (err >= 0) close(err);
  }
};

// A TCP connection to the agent whose first stderr line was "qpo agent: listening on 127.0.0.1:PORT".
int dial(const std::string& listening_line) {
  int port = std::stoi(listening_line.substr(listening_line.rfind(':') + 1));
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  return fd;
}

// Sends a hello with `token` and returns the agent's answer (up to a minute on a busy machine).
std::string hello(int fd, const std::string& token) {
  std::string err;
  REQUIRE(qpo::cluster::write_message(fd, "{\"type\":\"hello\",\"version\":" +
                                              std::to_string(qpo::cluster::kProtocolVersion) + ",\"token\":\"" + token + "\"}",
                                      &err));
  auto answer = qpo::cluster::read_message(fd, 60000, &err);
  return answer ? *answer : "(no answer: " + err + ")";
}

}  // namespace

TEST_CASE("--listen with no address binds loopback and says where") {
  std::string token = temp_file("0123456789abcdef-secret\n");
  for (const char* spec : {"0", ":0", "[]:0"}) {
    CAPTURE(spec);
    Agent a(spec, token);
    std::string line = a.first_line();
    CHECK(line.rfind("qpo agent: listening on 127.0.0.1:", 0) == 0);
    CHECK(a.stop(SIGTERM) == 0);
  }
  unlink(token.c_str());
}

TEST_CASE("a listening agent stops on SIGINT and on SIGTERM") {
  std::string token = temp_file("0123456789abcdef-secret\n");
  for (int sig : {SIGINT, SIGTERM}) {
    CAPTURE(sig);
    Agent a("127.0.0.1:0", token);
    REQUIRE(a.first_line().rfind("qpo agent: listening on", 0) == 0);
    CHECK(a.stop(sig) == 0);
  }
  unlink(token.c_str());
}

TEST_CASE("a token file with CRLF, LF or no line end gives the same token") {
  for (const char* text : {"0123456789abcdef-secret\r\n", "0123456789abcdef-secret\n", "0123456789abcdef-secret"}) {
    std::string path = temp_file(text), token, error;
    CHECK(qpo::cluster::read_token_file(path, &token, &error));
    CHECK(token == "0123456789abcdef-secret");
    unlink(path.c_str());
  }
}

TEST_CASE("a token shorter than 16 characters is refused by the reader both sides use") {
  std::string path = temp_file("short\r\n"), token, error;
  CHECK_FALSE(qpo::cluster::read_token_file(path, &token, &error));
  CHECK(error == "the token file " + path + " must hold a secret of at least 16 characters on its first line");
  unlink(path.c_str());
}

TEST_CASE("idle connections that never say hello do not keep a controller out") {
  std::string token = temp_file("0123456789abcdef-secret\n");
  Agent a("127.0.0.1:0", token);
  std::string line = a.first_line();
  REQUIRE(line.rfind("qpo agent: listening on", 0) == 0);
  // More idle connections than the agent keeps pending: the oldest are dropped for newer ones.
  std::vector<int> idle;
  for (int i = 0; i < 40; ++i) idle.push_back(dial(line));
  int fd = dial(line);
  std::string answer = hello(fd, "0123456789abcdef-secret");
  CHECK(answer.find("\"type\":\"hello\"") != std::string::npos);
  close(fd);
  for (int i : idle) close(i);
  CHECK(a.stop(SIGTERM) == 0);
  unlink(token.c_str());
}

TEST_CASE("while one controller's run is in progress, another authenticated controller is told the agent is busy") {
  std::string token = temp_file("0123456789abcdef-secret\n");
  Agent a("127.0.0.1:0", token);
  std::string line = a.first_line();
  REQUIRE(line.rfind("qpo agent: listening on", 0) == 0);
  int first = dial(line);
  REQUIRE(hello(first, "0123456789abcdef-secret").find("\"type\":\"hello\"") != std::string::npos);
  int second = dial(line);
  CHECK(hello(second, "0123456789abcdef-secret") ==
        "{\"type\":\"error\",\"message\":\"busy: this agent is running another controller's scenario; try again when it ends\"}");
  close(second);
  close(first);
  CHECK(a.stop(SIGTERM) == 0);
  unlink(token.c_str());
}

TEST_CASE("past its cap of connections the agent closes the oldest idle one, saying so, and its threads stay bounded") {
  // Issue 30 item 2: a thread per connection, unbounded, and 15 idle connections under
  // RLIMIT_AS 1 GiB failed the next thread ("internal error: Resource temporarily unavailable").
  std::string token = temp_file("0123456789abcdef-secret\n");
  Agent a("127.0.0.1:0", token);
  std::string line = a.first_line();
  REQUIRE(line.rfind("qpo agent: listening on", 0) == 0);
  std::vector<int> idle;
  for (size_t i = 0; i < 4 * qpo::cluster::kMaxAgentConnections; ++i) idle.push_back(dial(line));
  // Served: the agent took every connection before this one (it takes them in order).
  int fd = dial(line);
  CHECK(hello(fd, "0123456789abcdef-secret").find("\"type\":\"hello\"") != std::string::npos);
  // The main thread and one per connection served, however many came.
  CHECK(a.threads() >= 2);
  CHECK(a.threads() <= 1 + static_cast<int>(qpo::cluster::kMaxAgentConnections));
  CHECK(a.line_with("closed the oldest connection that has not shown its token, for one from 127.0.0.1:") != "");
  close(fd);
  for (int i : idle) close(i);
  CHECK(a.stop(SIGTERM) == 0);
  unlink(token.c_str());
}

TEST_CASE("a connection whose serving throws (std::bad_alloc) gets an error, the agent logs it and serves the next") {
  // Issue 30 item 2: a bad_alloc in a connection's thread ended the agent (std::terminate).
  std::string token = temp_file("0123456789abcdef-secret\n");
  Agent a("127.0.0.1:0", token, "a:throw:setup");
  std::string line = a.first_line();
  REQUIRE(line.rfind("qpo agent: listening on", 0) == 0);
  int first = dial(line);
  REQUIRE(hello(first, "0123456789abcdef-secret").find("\"type\":\"hello\"") != std::string::npos);
  std::string err;
  REQUIRE(qpo::cluster::write_message(
      first, R"({"type":"run","host":"a","file":"x.yaml","scenario":"version: 1\nhosts: { a: {} }\ndevices: { d: { host: a } }\n"})",
      &err));
  auto answer = qpo::cluster::read_message(first, 60000, &err);
  CHECK(answer.value_or("(no answer: " + err + ")") ==
        R"({"type":"error","message":"the agent failed serving this controller: std::bad_alloc"})");
  CHECK(a.line_with("failed serving") == "qpo agent: the agent failed serving this controller: std::bad_alloc");
  close(first);
  int second = dial(line);
  CHECK(hello(second, "0123456789abcdef-secret").find("\"type\":\"hello\"") != std::string::npos);
  close(second);
  CHECK(a.stop(SIGTERM) == 0);
  unlink(token.c_str());
}
