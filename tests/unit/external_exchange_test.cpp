// ibv_rc_pingpong's address message and the TCP side qpo speaks it over (src/interop), on
// loopback.
#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <thread>

#include <unistd.h>

#include "interop/pingpong_message.h"
#include "interop/tcp_peer.h"

using namespace qpo::interop;

namespace {

PingpongAddress sample() {
  PingpongAddress a;
  a.lid = 0;
  a.qpn = 0x11;
  a.psn = 0x5e85b4;
  a.gid = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 1, 2};
  return a;
}

Deadline in_ms(int ms) { return std::chrono::steady_clock::now() + std::chrono::milliseconds(ms); }

}  // namespace

TEST_CASE("the address message is the tool's 52 bytes: %04x:%06x:%06x: and the GID's bytes in hex, then a NUL") {
  std::string m = format_pingpong_message(sample());
  CHECK(m.size() == kPingpongMessageBytes);
  CHECK(m == std::string("0000:000011:5e85b4:00000000000000000000ffff0a000102") + '\0');
}

TEST_CASE("the tool's message parses back to its values") {
  std::string why;
  auto a = parse_pingpong_message(format_pingpong_message(sample()), &why);
  REQUIRE_MESSAGE(a, why);
  CHECK(a->qpn == 0x11);
  CHECK(a->psn == 0x5e85b4);
  CHECK(a->gid == sample().gid);
  CHECK(describe(*a) == "LID 0x0000, QPN 0x000011, PSN 0x5e85b4, GID ::ffff:10.0.1.2");
}

TEST_CASE("a message that is not the tool's is refused with what is wrong") {
  std::string why;
  CHECK_FALSE(parse_pingpong_message("done", &why));
  CHECK(why == "4 bytes, not the 52 of an ibv_pingpong address message");
  std::string bad = format_pingpong_message(sample());
  bad[5] = 'z';
  CHECK_FALSE(parse_pingpong_message(bad, &why));
  CHECK(why == "QPN 'z00011' is not up to 6 hex digits");
}

TEST_CASE("dial retries until the tool listens, and each message arrives whole") {
  // The listener starts 300 ms after the dial: the first connects are refused.
  const uint16_t port = 18000 + static_cast<uint16_t>(::getpid() % 1000);
  std::string server_error, got;
  std::thread server([&] {
    try {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      std::string why;
      auto peer = TcpPeer::accept_one(port, in_ms(10000), &why);
      if (!peer) {
        server_error = why;
        return;
      }
      auto m = peer->receive(kPingpongMessageBytes, in_ms(10000), &why);
      if (m) got = *m;
      if (!peer->send(kPingpongDone, &why)) server_error = why;
    } catch (const std::exception& e) {
      server_error = e.what();
    }
  });
  std::string why;
  auto tool = TcpPeer::dial("127.0.0.1", port, in_ms(10000), &why);
  bool sent = tool && tool->send(format_pingpong_message(sample()), &why);
  auto done = tool ? tool->receive(kPingpongDone.size(), in_ms(10000), &why) : std::nullopt;
  server.join();
  REQUIRE_MESSAGE(tool, why);
  CHECK(sent);
  CHECK(server_error == "");
  CHECK(got == format_pingpong_message(sample()));
  REQUIRE(done);
  CHECK(*done == std::string(kPingpongDone));
}

TEST_CASE("a peer that closes mid-message is named, with how much arrived") {
  const uint16_t port = 19000 + static_cast<uint16_t>(::getpid() % 1000);
  std::string server_error;
  std::thread server([&] {
    try {
      std::string why;
      auto peer = TcpPeer::accept_one(port, in_ms(10000), &why);
      if (!peer) server_error = why;
      else if (!peer->send("0000:0000", &why)) server_error = why;
    } catch (const std::exception& e) {
      server_error = e.what();
    }
  });  // the peer closes when it goes out of scope
  std::string why;
  auto tool = TcpPeer::dial("127.0.0.1", port, in_ms(10000), &why);
  REQUIRE_MESSAGE(tool, why);
  auto m = tool->receive(kPingpongMessageBytes, in_ms(10000), &why);
  server.join();
  CHECK(server_error == "");
  CHECK_FALSE(m);
  CHECK(why.find("closed the connection after 9 of 52 bytes") != std::string::npos);
}

TEST_CASE("nobody listening: dial gives up at the deadline and says where it tried") {
  std::string why;
  auto tool = TcpPeer::dial("127.0.0.1", 1, in_ms(500), &why);
  CHECK_FALSE(tool);
  CHECK(why.find("cannot connect to 127.0.0.1:1: Connection refused") == 0);
}
