#include "exec/progress_line.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdio>

namespace qpo::exec {

namespace {

void write_all(int fd, const std::string& s) {
  size_t done = 0;
  while (done < s.size()) {
    ssize_t n = ::write(fd, s.data() + done, s.size() - done);
    if (n <= 0) return;  // a closed terminal is no reason to disturb the run
    done += static_cast<size_t>(n);
  }
}

// A line longer than the terminal wraps, and "\r" then only returns to the wrapped part.
size_t columns(int fd) {
  winsize ws{};
  if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1) return ws.ws_col - 1;
  return 79;
}

}  // namespace

ProgressLine::ProgressLine(int fd, std::string label) : fd_(fd), label_(std::move(label)), live_(isatty(fd) == 1) {}

ProgressLine::~ProgressLine() { finish(); }

void ProgressLine::update(const std::string& worker, const dataplane::StreamProgress& p) {
  if (!live_) return;
  std::lock_guard lock(m_);
  latest_[worker] = p;
  auto now = std::chrono::steady_clock::now();
  if (drawn_ && now - last_draw_ < std::chrono::milliseconds(500)) return;
  last_draw_ = now;
  draw_locked();
}

void ProgressLine::log(const std::string& line) {
  std::lock_guard lock(m_);
  if (drawn_) erase_locked();
  write_all(fd_, line + "\n");
  if (!latest_.empty() && live_) draw_locked();
}

void ProgressLine::finish() {
  std::lock_guard lock(m_);
  if (drawn_) erase_locked();
  latest_.clear();
}

// "write_bw  2.0 s  qa 45.61 MB/s 0.000730 Mpps  qb rx 0.000729 Mpps": perftest's units.
std::string ProgressLine::render() const {
  std::string out = label_;
  double seconds = 0;
  for (const auto& [worker, p] : latest_) seconds = std::max(seconds, p.seconds);
  char buf[160];
  std::snprintf(buf, sizeof buf, "  %.1f s", seconds);
  out += buf;
  for (const auto& [worker, p] : latest_) {
    if (p.seconds <= 0) continue;
    if (p.ops > 0) {
      std::snprintf(buf, sizeof buf, "  %s %.2f MB/s %.6f Mpps", worker.c_str(),
                    static_cast<double>(p.bytes) / p.seconds / (1024.0 * 1024.0), static_cast<double>(p.ops) / p.seconds / 1e6);
      out += buf;
    } else if (p.recv_ops > 0) {
      std::snprintf(buf, sizeof buf, "  %s rx %.6f Mpps", worker.c_str(), static_cast<double>(p.recv_ops) / p.seconds / 1e6);
      out += buf;
    }
  }
  return out;
}

void ProgressLine::draw_locked() {
  std::string line = render();
  size_t width = columns(fd_);
  if (line.size() > width) line.resize(width);
  write_all(fd_, "\r\033[K" + line);
  drawn_ = true;
}

void ProgressLine::erase_locked() {
  write_all(fd_, "\r\033[K");
  drawn_ = false;
}

}  // namespace qpo::exec
