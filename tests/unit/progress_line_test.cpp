// The live progress line of script workloads: drawn on a terminal, never on anything else
// (a pipe here, as when qpo run's stderr goes to a file, CI or the lab console).
#include <doctest/doctest.h>

#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <unistd.h>

#include <string>

#include "exec/progress_line.h"

namespace {

qpo::dataplane::StreamProgress two_seconds_of_writes() {
  qpo::dataplane::StreamProgress p;
  p.qp = "qa";
  p.ops = 1000;
  p.bytes = 1000 * 65536;
  p.seconds = 2.0;
  return p;
}

// Everything readable on `fd` within a short wait.
std::string drain(int fd) {
  std::string out;
  char buf[512];
  pollfd pfd{fd, POLLIN, 0};
  while (poll(&pfd, 1, 200) > 0) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

}  // namespace

TEST_CASE("the progress line writes nothing when its stream is not a terminal") {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  {
    qpo::exec::ProgressLine line(fds[1], "write_bw");
    CHECK_FALSE(line.live());
    for (int i = 0; i < 5; ++i) line.update("qa", two_seconds_of_writes());
    line.finish();
  }
  close(fds[1]);
  CHECK(drain(fds[0]).empty());
  close(fds[0]);
}

TEST_CASE("a script's log line still goes through when the stream is not a terminal") {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  {
    qpo::exec::ProgressLine line(fds[1], "write_bw");
    line.update("qa", two_seconds_of_writes());
    line.log("[qa] sizes above 4096 bytes skipped");
  }
  close(fds[1]);
  CHECK(drain(fds[0]) == "[qa] sizes above 4096 bytes skipped\n");
  close(fds[0]);
}

TEST_CASE("on a terminal the line shows the rate so far and is erased at the end") {
  int master = posix_openpt(O_RDWR | O_NOCTTY);
  REQUIRE(master >= 0);
  REQUIRE(grantpt(master) == 0);
  REQUIRE(unlockpt(master) == 0);
  int terminal = open(ptsname(master), O_RDWR | O_NOCTTY);
  REQUIRE(terminal >= 0);
  std::string shown;
  {
    qpo::exec::ProgressLine line(terminal, "write_bw");
    CHECK(line.live());
    line.update("qa", two_seconds_of_writes());
    shown = drain(master);
    line.finish();
  }
  // 1000 x 64 KiB in 2 s = 31.25 MB/s (2^20 bytes), 0.0005 Mpps.
  CHECK(shown.find("write_bw  2.0 s  qa 31.25 MB/s 0.000500 Mpps") != std::string::npos);
  CHECK(shown.rfind("\r\033[K", 0) == 0);
  CHECK(drain(master) == "\r\033[K");
  close(terminal);
  close(master);
}
