// `qpo agent --listen`: a thread per connection, so a connection that never says hello cannot
// keep a controller out, and at most kMaxAgentConnections of them (agent.h), so a flood of
// connections cannot exhaust the agent's memory or threads (each thread reserves a stack and,
// under RLIMIT_AS, 15 of them were enough to fail the next std::thread). Before the token is
// checked a connection is "pending": it has kPreAuthTimeoutMs to send its hello, and when the
// cap is reached the oldest pending one is closed for the newcomer (its thread joined first),
// so idle connections delay a controller by one handshake at most; when none is pending the
// newcomer is refused. One authenticated controller runs at a time; another one meanwhile is
// refused with a message saying so (an agent drives one host's devices for one scenario).
// Whatever a connection's thread meets is caught there and logged: the agent goes on.
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <list>
#include <mutex>
#include <system_error>
#include <thread>

#include "cluster/agent.h"
#include "cluster/launch.h"
#include "exec/host_session.h"
#include "util/strings.h"
#include "util/thread_group.h"

namespace qpo::cluster {

namespace {

constexpr int kPreAuthTimeoutMs = 5000;
// How long the accept loop waits for the thread of a connection it closed to end.
constexpr auto kDropWait = std::chrono::seconds(5);

class Listener {
 public:
  explicit Listener(AgentOptions o) : options_(std::move(o)) { options_.hello_timeout_ms = kPreAuthTimeoutMs; }
  ~Listener() { finish(); }

  // Takes the connection; returns once its thread runs, or it was refused.
  void serve(int fd, const std::string& peer) {
    std::unique_lock lock(m_);
    reap();
    if (slots_.size() >= kMaxAgentConnections && !make_room(lock, peer)) {
      lock.unlock();
      log_line("refused a connection from " + peer + ": " + std::to_string(kMaxAgentConnections) +
               " connections are being served, the most this agent takes");
      refuse_controller(fd, "busy: this agent serves " + std::to_string(kMaxAgentConnections) +
                                " connections already; try again when one ends");
      ::close(fd);
      return;
    }
    pending_.push_back(fd);
    auto& slot = slots_.emplace_back();
    slot.fd = fd;
    if (auto why = slot.thread.start([this, &slot] { connection(slot); })) {  // no memory or no thread left
      pending_.remove(fd);
      slots_.pop_back();
      lock.unlock();
      log_line("could not start a thread for a connection from " + peer + " (" + *why + "); closed it");
      ::close(fd);
    }
  }

  // Drops pending connections and waits for every connection thread (a run in progress
  // sees the same stop request and tears down).
  void finish() {
    std::unique_lock lock(m_);
    for (int fd : pending_) ::shutdown(fd, SHUT_RDWR);
    pending_.clear();
    done_.wait(lock, [&] { return std::all_of(slots_.begin(), slots_.end(), [](const Slot& s) { return s.finished; }); });
    reap();
  }

  bool served_one() {
    std::lock_guard lock(m_);
    return connections_finished_ > 0;
  }

 private:
  struct Slot {
    int fd = -1;
    util::ThreadGroup thread;  // one thread: the connection's
    bool finished = false;  // its thread has nothing left to do but return
  };

  // Joins the threads of connections that ended. Called with m_ held: a finished thread no
  // longer takes it.
  void reap() {
    for (auto it = slots_.begin(); it != slots_.end();)
      if (it->finished) {
        it->thread.join();
        it = slots_.erase(it);
      } else {
        ++it;
      }
  }

  // At the cap: closes the oldest pending connection and waits for its thread to end, so the
  // threads never outnumber the cap. False when none is pending (all are past the token).
  bool make_room(std::unique_lock<std::mutex>& lock, const std::string& peer) {
    if (pending_.empty()) return false;
    int oldest = pending_.front();
    pending_.pop_front();
    ::shutdown(oldest, SHUT_RDWR);  // its thread sees the end and closes it
    log_line("closed the oldest connection that has not shown its token, for one from " + peer + " (" +
             std::to_string(kMaxAgentConnections) + " connections at once at most)");
    done_.wait_for(lock, kDropWait, [&] {
      return std::any_of(slots_.begin(), slots_.end(), [](const Slot& s) { return s.finished; });
    });
    reap();
    return slots_.size() < kMaxAgentConnections;
  }

  // A connection's thread. It must not throw (std::terminate would end the agent): whatever
  // serving the controller throws is logged, and the agent goes on.
  void connection(Slot& slot) {
    int fd = slot.fd;
    bool ran = false;
    try {
      AgentOptions o = options_;
      o.authenticated = [&]() -> std::string {
        std::lock_guard lock(m_);
        pending_.remove(fd);
        if (running_) return "busy: this agent is running another controller's scenario; try again when it ends";
        running_ = ran = true;
        return "";
      };
      serve_controller(fd, fd, o);
    } catch (const std::exception& e) {
      log_line("a connection failed: " + util::printable(e.what()) + "; still listening");
    } catch (...) {
      log_line("a connection failed; still listening");
    }
    std::lock_guard lock(m_);
    pending_.remove(fd);  // it may have ended before authenticating
    ::close(fd);
    if (ran) running_ = false;
    ++connections_finished_;
    slot.finished = true;
    done_.notify_all();
  }

  AgentOptions options_;
  std::mutex m_;
  std::condition_variable done_;
  std::list<int> pending_;  // oldest first
  std::list<Slot> slots_;   // a list: a thread holds its own slot by reference
  int connections_finished_ = 0;
  bool running_ = false;
};

// "127.0.0.1:41234" for a log line.
std::string peer_name(const sockaddr_storage& ss, socklen_t len) {
  char host[NI_MAXHOST], port[NI_MAXSERV];
  if (getnameinfo(reinterpret_cast<const sockaddr*>(&ss), len, host, sizeof host, port, sizeof port,
                  NI_NUMERICHOST | NI_NUMERICSERV) != 0)
    return "an unknown peer";
  return ss.ss_family == AF_INET6 ? "[" + std::string(host) + "]:" + port : std::string(host) + ":" + port;
}

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
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    int fd = ::accept4(lfd, reinterpret_cast<sockaddr*>(&ss), &len, SOCK_CLOEXEC);
    if (fd >= 0) {
      listener.serve(fd, peer_name(ss, len));
    } else if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
      // Out of descriptors or memory: the connection waits in the backlog; say so, and give
      // the connections being served time to end instead of spinning on poll.
      log_line(std::string("cannot accept a connection now: ") + std::strerror(errno));
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
  }
  ::close(lfd);
  bool signalled = exec::stop_requested();
  listener.finish();
  if (signalled) std::cerr << "qpo agent: stopped (signal)\n";
  return 0;
}

}  // namespace qpo::cluster
