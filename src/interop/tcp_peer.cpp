#include "interop/tcp_peer.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

namespace qpo::interop {

namespace {

constexpr int kRetryMs = 200;

int ms_left(Deadline deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
  return left <= 0 ? 0 : static_cast<int>(std::min<long long>(left, 1 << 30));
}

// Waits for `events` on fd until the deadline: 1 ready, 0 timed out, -1 error (errno).
int wait_for(int fd, short events, Deadline deadline) {
  pollfd p{fd, events, 0};
  int r;
  while ((r = poll(&p, 1, ms_left(deadline))) < 0 && errno == EINTR) {
  }
  return r;
}

std::string address_text(const sockaddr* sa) {
  char host[INET6_ADDRSTRLEN] = "?";
  uint16_t port = 0;
  if (sa->sa_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(sa);
    inet_ntop(AF_INET, &in->sin_addr, host, sizeof host);
    port = ntohs(in->sin_port);
  } else if (sa->sa_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(sa);
    inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof host);
    port = ntohs(in6->sin6_port);
    // An IPv4 client on a dual-stack socket: show it as the tool's users know it.
    if (std::strncmp(host, "::ffff:", 7) == 0 && std::strchr(host + 7, '.')) std::memmove(host, host + 7, std::strlen(host + 7) + 1);
  }
  return std::string(host) + ":" + std::to_string(port);
}

// Every address `name` resolves to, written as address_text writes a connection's host.
std::vector<std::string> host_addresses(const std::string& name) {
  std::vector<std::string> out;
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (getaddrinfo(name.c_str(), nullptr, &hints, &res) != 0) return out;
  for (auto* a = res; a; a = a->ai_next) {
    std::string text = address_text(a->ai_addr);
    out.push_back(text.substr(0, text.rfind(':')));
  }
  freeaddrinfo(res);
  return out;
}

void no_delay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

// One non-blocking connect to `ai`, waited for until the deadline: the fd (blocking again), or
// -1 with the errno in `err`.
int connect_once(const addrinfo* ai, Deadline deadline, int* err) {
  int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
  if (fd < 0) {
    *err = errno;
    return -1;
  }
  int e = connect(fd, ai->ai_addr, ai->ai_addrlen) == 0 ? 0 : errno;
  if (e == EINPROGRESS) {
    int r = wait_for(fd, POLLOUT, deadline);
    socklen_t len = sizeof e;
    if (r == 0) e = ETIMEDOUT;
    else if (r < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len) != 0) e = errno;
  }
  if (e == 0 && fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0) e = errno;
  if (e != 0) {
    ::close(fd);
    *err = e;
    return -1;
  }
  return fd;
}

}  // namespace

std::optional<TcpPeer> TcpPeer::dial(const std::string& host, uint16_t port, Deadline deadline, std::string* why) {
  addrinfo hints{}, *res = nullptr;
  hints.ai_socktype = SOCK_STREAM;
  std::string where = host + ":" + std::to_string(port);
  if (int e = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res); e != 0) {
    *why = "cannot resolve " + host + ": " + gai_strerror(e);
    return std::nullopt;
  }
  int last = ETIMEDOUT, tries = 0;
  for (;;) {
    ++tries;
    for (auto* ai = res; ai; ai = ai->ai_next) {
      int fd = connect_once(ai, deadline, &last);
      if (fd < 0) continue;
      freeaddrinfo(res);
      no_delay(fd);
      return TcpPeer(fd, where);
    }
    if (ms_left(deadline) == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min(kRetryMs, ms_left(deadline))));
  }
  freeaddrinfo(res);
  *why = "cannot connect to " + where + ": " + std::strerror(last) + " (" + std::to_string(tries) +
         " tries; is the tool running there as server?)";
  return std::nullopt;
}

namespace {

// A listening socket of `family` on every address at `port`: the fd, or -1 with errno set.
int listen_on(int family, uint16_t port, uint16_t* bound) {
  int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  int one = 1, zero = 0;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_storage any{};
  socklen_t len;
  if (family == AF_INET6) {
    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);  // IPv4 clients too
    auto* a = reinterpret_cast<sockaddr_in6*>(&any);
    a->sin6_family = AF_INET6;
    a->sin6_addr = in6addr_any;
    a->sin6_port = htons(port);
    len = sizeof *a;
  } else {
    auto* a = reinterpret_cast<sockaddr_in*>(&any);
    a->sin_family = AF_INET;
    a->sin_addr.s_addr = htonl(INADDR_ANY);
    a->sin_port = htons(port);
    len = sizeof *a;
  }
  if (bind(fd, reinterpret_cast<sockaddr*>(&any), len) != 0 || ::listen(fd, 1) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&any), &len) != 0) {
    int e = errno;
    ::close(fd);
    errno = e;
    return -1;
  }
  *bound = family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&any)->sin6_port)
                              : ntohs(reinterpret_cast<sockaddr_in*>(&any)->sin_port);
  return fd;
}

}  // namespace

std::optional<TcpListener> TcpListener::open(uint16_t port, std::string* why) {
  // IPv6 with IPV6_V6ONLY off takes IPv4 clients too; where IPv6 is off (no socket, or no
  // address to bind), IPv4 alone.
  uint16_t bound = 0;
  int fd = listen_on(AF_INET6, port, &bound);
  if (fd < 0 && (errno == EAFNOSUPPORT || errno == EADDRNOTAVAIL)) fd = listen_on(AF_INET, port, &bound);
  if (fd < 0) {
    *why = "cannot listen on port " + std::to_string(port) + ": " + std::strerror(errno);
    return std::nullopt;
  }
  return TcpListener(fd, bound);
}

TcpListener& TcpListener::operator=(TcpListener&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.fd_;
    port_ = o.port_;
    o.fd_ = -1;
  }
  return *this;
}

TcpListener::~TcpListener() {
  if (fd_ >= 0) ::close(fd_);
}

std::optional<TcpPeer> TcpListener::accept_one(Deadline deadline, std::string* why, const std::string& only_from,
                                               std::vector<std::string>* refused) {
  std::string on = "port " + std::to_string(port_);
  if (fd_ < 0) {
    *why = "no listener on " + on;
    return std::nullopt;
  }
  std::vector<std::string> allowed;  // only_from's addresses, as address_text writes a host
  if (!only_from.empty()) {
    allowed = host_addresses(only_from);
    if (allowed.empty()) {
      *why = "cannot resolve '" + only_from + "', the only address the tool may connect from";
      return std::nullopt;
    }
  }
  std::vector<std::string> strangers;
  for (;;) {
    int r = wait_for(fd_, POLLIN, deadline);
    if (r <= 0) {
      *why = r == 0 ? "no connection on " + on + " before the phase timeout (is the tool started as client, pointed at this host?)"
                    : "waiting for a connection on " + on + ": " + std::strerror(errno);
      if (r == 0 && !strangers.empty()) {
        *why = "no connection from " + only_from + " on " + on + " before the phase timeout; refused";
        for (size_t i = 0; i < strangers.size(); ++i) *why += (i ? ", " : " ") + strangers[i];
      }
      if (refused) *refused = strangers;
      return std::nullopt;
    }
    sockaddr_storage from{};
    socklen_t len = sizeof from;
    int conn = accept4(fd_, reinterpret_cast<sockaddr*>(&from), &len, SOCK_CLOEXEC);
    int e = errno;
    if (conn < 0) {
      ::close(fd_);
      fd_ = -1;
      *why = "accepting on " + on + ": " + std::strerror(e);
      if (refused) *refused = strangers;
      return std::nullopt;
    }
    std::string remote = address_text(reinterpret_cast<sockaddr*>(&from));
    std::string host = remote.substr(0, remote.rfind(':'));
    if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), host) == allowed.end()) {
      ::close(conn);  // not the tool the scenario names: it sees its connection closed
      strangers.push_back(remote);
      continue;
    }
    ::close(fd_);
    fd_ = -1;
    no_delay(conn);
    if (refused) *refused = strangers;
    return TcpPeer(conn, std::move(remote));
  }
}

TcpPeer& TcpPeer::operator=(TcpPeer&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.fd_;
    remote_ = std::move(o.remote_);
    o.fd_ = -1;
  }
  return *this;
}

TcpPeer::~TcpPeer() {
  if (fd_ >= 0) ::close(fd_);
}

bool TcpPeer::send(std::string_view bytes, std::string* why) {
  ssize_t n;
  while ((n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL)) < 0 && errno == EINTR) {
  }
  if (n == static_cast<ssize_t>(bytes.size())) return true;
  *why = n < 0 ? "write to " + remote_ + ": " + std::strerror(errno)
               : "write to " + remote_ + ": " + std::to_string(n) + " of " + std::to_string(bytes.size()) + " bytes";
  return false;
}

std::optional<std::string> TcpPeer::receive(size_t n, Deadline deadline, std::string* why,
                                            const std::atomic<bool>* stop) {
  std::string out(n, '\0');
  size_t got = 0;
  while (got < n) {
    // With a stop flag, wait in slices of 100 ms so that it is seen soon after it is set.
    auto slice = stop ? std::min(deadline, std::chrono::steady_clock::now() + std::chrono::milliseconds(100)) : deadline;
    int r = wait_for(fd_, POLLIN, slice);
    if (r == 0 && stop && stop->load()) {
      *why = "stopped while waiting for " + remote_ + " (" + std::to_string(got) + " of " + std::to_string(n) + " bytes)";
      return std::nullopt;
    }
    if (r == 0 && std::chrono::steady_clock::now() < deadline) continue;
    if (r == 0) {
      *why = "no message from " + remote_ + " before the phase timeout (" + std::to_string(got) + " of " +
             std::to_string(n) + " bytes)";
      return std::nullopt;
    }
    ssize_t k = r < 0 ? -1 : ::recv(fd_, out.data() + got, n - got, 0);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) {
      *why = k == 0 ? remote_ + " closed the connection after " + std::to_string(got) + " of " + std::to_string(n) + " bytes"
                    : "read from " + remote_ + ": " + std::strerror(errno);
      return std::nullopt;
    }
    got += static_cast<size_t>(k);
  }
  return out;
}

}  // namespace qpo::interop
