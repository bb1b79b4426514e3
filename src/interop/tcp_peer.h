#pragma once
// One TCP connection to a stock tool's out-of-band exchange (ibv_rc_pingpong's): qpo dials the
// tool's server or accepts the tool as client. The tools read each message with one read() and
// compare its length exactly, so every message leaves in one write() with TCP_NODELAY.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace qpo::interop {

using Deadline = std::chrono::steady_clock::time_point;

class TcpPeer {
 public:
  // Connects to host:port. A refused or unreachable connect is tried again every 200 ms until
  // the deadline: the tool may not listen yet.
  static std::optional<TcpPeer> dial(const std::string& host, uint16_t port, Deadline deadline, std::string* why);

  TcpPeer(TcpPeer&& o) noexcept : fd_(o.fd_), remote_(std::move(o.remote_)) { o.fd_ = -1; }
  TcpPeer& operator=(TcpPeer&& o) noexcept;
  TcpPeer(const TcpPeer&) = delete;
  TcpPeer& operator=(const TcpPeer&) = delete;
  ~TcpPeer();

  // The whole message in one write(); false with `why` otherwise.
  bool send(std::string_view bytes, std::string* why);
  // Exactly `n` bytes before the deadline; nullopt with `why` on a timeout, an early close or an
  // error, or once `stop` (when given) is set.
  std::optional<std::string> receive(size_t n, Deadline deadline, std::string* why,
                                     const std::atomic<bool>* stop = nullptr);
  const std::string& remote() const { return remote_; }  // "10.0.1.2:40012"

 private:
  friend class TcpListener;
  TcpPeer(int fd, std::string remote) : fd_(fd), remote_(std::move(remote)) {}
  int fd_ = -1;
  std::string remote_;
};

// A listening socket on every address (IPv6 with IPv4 mapped, or IPv4 alone where IPv6 is off),
// SO_REUSEADDR. Opened early, so a tool that connects before qpo gets to its exchange waits in
// the backlog instead of being refused (the stock tools do not retry).
class TcpListener {
 public:
  // port 0: the kernel picks one (port() says which).
  static std::optional<TcpListener> open(uint16_t port, std::string* why);
  TcpListener(TcpListener&& o) noexcept : fd_(o.fd_), port_(o.port_) { o.fd_ = -1; }
  TcpListener& operator=(TcpListener&& o) noexcept;
  TcpListener(const TcpListener&) = delete;
  TcpListener& operator=(const TcpListener&) = delete;
  ~TcpListener();
  uint16_t port() const { return port_; }
  // The first connection before the deadline; the listening socket is closed then, as the
  // tools' servers do (one client each). With `only_from` (an address or host name), a
  // connection from anywhere else is closed at once, named in `refused` ("10.0.1.3:40112"),
  // and the wait goes on.
  std::optional<TcpPeer> accept_one(Deadline deadline, std::string* why, const std::string& only_from = "",
                                    std::vector<std::string>* refused = nullptr);

 private:
  TcpListener(int fd, uint16_t port) : fd_(fd), port_(port) {}
  int fd_ = -1;
  uint16_t port_ = 0;
};

}  // namespace qpo::interop
