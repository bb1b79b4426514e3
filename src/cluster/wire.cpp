#include "cluster/wire.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

namespace qpo::cluster {

namespace {

bool write_all(int fd, const char* p, size_t n, std::string* error) {
  while (n) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      *error = std::string("write failed: ") + std::strerror(errno);
      return false;
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

bool read_all(int fd, char* p, size_t n, std::chrono::steady_clock::time_point deadline, bool forever,
              std::string* error) {
  while (n) {
    int wait = -1;
    if (!forever) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) {
        *error = "timed out";
        return false;
      }
      wait = static_cast<int>(left.count());
    }
    pollfd pfd{fd, POLLIN, 0};
    int r = ::poll(&pfd, 1, wait);
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) {
      *error = "timed out";
      return false;
    }
    ssize_t got = ::read(fd, p, n);
    if (got < 0 && errno == EINTR) continue;
    if (got == 0) {
      *error = "connection closed";
      return false;
    }
    if (got < 0) {
      *error = std::string("read failed: ") + std::strerror(errno);
      return false;
    }
    p += got;
    n -= static_cast<size_t>(got);
  }
  return true;
}

}  // namespace

bool write_message(int fd, const std::string& json, std::string* error) {
  if (json.size() > kMaxMessageBytes) {
    *error = "message of " + std::to_string(json.size()) + " bytes exceeds the limit";
    return false;
  }
  uint32_t n = static_cast<uint32_t>(json.size());
  unsigned char head[4] = {static_cast<unsigned char>(n >> 24), static_cast<unsigned char>(n >> 16),
                           static_cast<unsigned char>(n >> 8), static_cast<unsigned char>(n)};
  return write_all(fd, reinterpret_cast<char*>(head), 4, error) && write_all(fd, json.data(), json.size(), error);
}

std::optional<std::string> read_message(int fd, int timeout_ms, std::string* error, uint32_t max_bytes) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms < 0 ? 0 : timeout_ms);
  bool forever = timeout_ms < 0;
  unsigned char head[4];
  if (!read_all(fd, reinterpret_cast<char*>(head), 4, deadline, forever, error)) return std::nullopt;
  uint32_t n = (uint32_t{head[0]} << 24) | (uint32_t{head[1]} << 16) | (uint32_t{head[2]} << 8) | head[3];
  if (n > max_bytes) {
    *error = "peer announced a " + std::to_string(n) + "-byte message (limit " + std::to_string(max_bytes) +
             "); not a qpo agent?";
    return std::nullopt;
  }
  std::string body(n, '\0');
  if (!read_all(fd, body.data(), n, deadline, forever, error)) return std::nullopt;
  return body;
}

}  // namespace qpo::cluster
