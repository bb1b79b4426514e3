// `qpo agent --listen`: one thread per connection, so a connection that never says hello
// cannot keep a controller out. Before the token is checked a connection is "pending": it has
// kPreAuthTimeoutMs to send its hello, and when kMaxPending connections are pending the
// oldest is dropped to make room, so a flood of idle connections delays a controller by one
// handshake at most. One authenticated controller runs at a time; another one meanwhile is
// refused with a message saying so (an agent drives one host's devices for one scenario).
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <iostream>
#include <list>
#include <mutex>
#include <thread>

#include "cluster/agent.h"
#include "cluster/launch.h"
#include "exec/host_session.h"

namespace qpo::cluster {

namespace {

constexpr int kPreAuthTimeoutMs = 5000;
constexpr size_t kMaxPending = 32;

class Listener {
 public:
  explicit Listener(AgentOptions o) : options_(std::move(o)) { options_.hello_timeout_ms = kPreAuthTimeoutMs; }

  // Takes the connection; returns at once.
  void serve(int fd) {
    std::lock_guard lock(m_);
    if (pending_.size() >= kMaxPending) {
      ::shutdown(pending_.front(), SHUT_RDWR);  // its thread sees the end and closes it
      pending_.pop_front();
    }
    pending_.push_back(fd);
    ++threads_;
    std::thread([this, fd] { connection(fd); }).detach();
  }

  // Drops pending connections and waits for every connection thread (a run in progress
  // sees the same stop request and tears down).
  void finish() {
    std::unique_lock lock(m_);
    for (int fd : pending_) ::shutdown(fd, SHUT_RDWR);
    pending_.clear();
    done_.wait(lock, [&] { return threads_ == 0; });
  }

  bool served_one() {
    std::lock_guard lock(m_);
    return connections_finished_ > 0;
  }

 private:
  void connection(int fd) {
    bool ran = false;
    AgentOptions o = options_;
    o.authenticated = [&]() -> std::string {
      std::lock_guard lock(m_);
      pending_.remove(fd);
      if (running_) return "busy: this agent is running another controller's scenario; try again when it ends";
      running_ = ran = true;
      return "";
    };
    serve_controller(fd, fd, o);
    std::lock_guard lock(m_);
    pending_.remove(fd);  // it may have ended before authenticating
    ::close(fd);
    if (ran) running_ = false;
    ++connections_finished_;
    --threads_;
    done_.notify_all();
  }

  AgentOptions options_;
  std::mutex m_;
  std::condition_variable done_;
  std::list<int> pending_;
  int threads_ = 0, connections_finished_ = 0;
  bool running_ = false;
};

}  // namespace

int listen_for_controllers(const std::string& spec, const std::string& token_file, AgentOptions o) {
  std::string token, err;
  if (!read_token_file(token_file, &token, &err)) {
    std::cerr << "qpo agent: --listen needs --token-file: " << err << "\n";
    return 2;
  }
  o.expected_token = token;
  int lfd = listen_on(spec, &err);
  if (lfd < 0) {
    std::cerr << "qpo agent: " << err << "\n";
    return 2;
  }
  std::cerr << "qpo agent: listening on " << bound_address(lfd) << "\n";
  Listener listener(o);
  bool once = std::getenv("QPO_AGENT_ONCE") != nullptr;  // tests: serve one connection, then exit
  // SIGINT/SIGTERM (exec::request_stop) end the loop: poll, not a blocking accept.
  while (!exec::stop_requested() && !(once && listener.served_one())) {
    pollfd p{lfd, POLLIN, 0};
    if (::poll(&p, 1, 200) <= 0) continue;
    int fd = ::accept4(lfd, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd >= 0) listener.serve(fd);
  }
  ::close(lfd);
  bool signalled = exec::stop_requested();
  listener.finish();
  if (signalled) std::cerr << "qpo agent: stopped (signal)\n";
  return 0;
}

}  // namespace qpo::cluster
