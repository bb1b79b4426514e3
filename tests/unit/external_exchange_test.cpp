// ibv_rc_pingpong's address message and the TCP side qpo speaks it over (src/interop), on
// loopback.
#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "interop/pingpong_message.h"
#include "interop/tcp_peer.h"
#include "test_threads.h"

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
  // A port the kernel picks, free now; the listener opens on it 300 ms after the dial starts,
  // so the first connects are refused and dial must try again.
  std::string why;
  auto probe = TcpListener::open(0, &why);
  REQUIRE_MESSAGE(probe, why);
  const uint16_t port = probe->port();
  probe.reset();
  std::string server_error, got;
  qpo::testing::WorkerThread server([&] {
    try {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      std::string e;
      auto listener = TcpListener::open(port, &e);
      auto peer = listener ? listener->accept_one(in_ms(10000), &e) : std::nullopt;
      if (!peer) {
        server_error = e;
        return;
      }
      auto m = peer->receive(kPingpongMessageBytes, in_ms(10000), &e);
      if (m) got = *m;
      if (!peer->send(kPingpongDone, &e)) server_error = e;
    } catch (const std::exception& e) {
      server_error = e.what();
    } catch (...) {  // nothing leaves the thread: its error is asserted after the join
      server_error = "an exception that is not a std::exception";
    }
  });
  auto start = std::chrono::steady_clock::now();
  auto tool = TcpPeer::dial("127.0.0.1", port, in_ms(10000), &why);
  auto dialled_after = std::chrono::steady_clock::now() - start;
  bool sent = tool && tool->send(format_pingpong_message(sample()), &why);
  auto done = tool ? tool->receive(kPingpongDone.size(), in_ms(10000), &why) : std::nullopt;
  CHECK(server.join() == "");
  REQUIRE_MESSAGE(tool, why);
  CHECK(dialled_after >= std::chrono::milliseconds(250));  // it did not stop at the first refusal
  CHECK(sent);
  CHECK(server_error == "");
  CHECK(got == format_pingpong_message(sample()));
  REQUIRE(done);
  CHECK(*done == std::string(kPingpongDone));
}

TEST_CASE("a listener opened early keeps a tool that connects before qpo accepts in its backlog") {
  std::string why;
  auto listener = TcpListener::open(0, &why);
  REQUIRE_MESSAGE(listener, why);
  auto tool = TcpPeer::dial("127.0.0.1", listener->port(), in_ms(5000), &why);  // before accept
  REQUIRE_MESSAGE(tool, why);
  REQUIRE(tool->send(format_pingpong_message(sample()), &why));
  auto qpo = listener->accept_one(in_ms(5000), &why);
  REQUIRE_MESSAGE(qpo, why);
  CHECK(qpo->remote().rfind("127.0.0.1:", 0) == 0);
  auto m = qpo->receive(kPingpongMessageBytes, in_ms(5000), &why);
  REQUIRE_MESSAGE(m, why);
  CHECK(*m == format_pingpong_message(sample()));
}

TEST_CASE("a peer that closes mid-message is named, with how much arrived") {
  std::string why;
  auto listener = TcpListener::open(0, &why);
  REQUIRE_MESSAGE(listener, why);
  auto tool = TcpPeer::dial("127.0.0.1", listener->port(), in_ms(5000), &why);
  REQUIRE_MESSAGE(tool, why);
  {
    auto qpo = listener->accept_one(in_ms(5000), &why);
    REQUIRE_MESSAGE(qpo, why);
    REQUIRE(qpo->send("0000:0000", &why));
  }  // closed here
  auto m = tool->receive(kPingpongMessageBytes, in_ms(5000), &why);
  CHECK_FALSE(m);
  CHECK(why.find("closed the connection after 9 of 52 bytes") != std::string::npos);
}

TEST_CASE("deadlines: nobody connects, nobody writes, nobody listens") {
  std::string why;
  auto listener = TcpListener::open(0, &why);
  REQUIRE_MESSAGE(listener, why);
  std::string port = std::to_string(listener->port());
  auto accepted = listener->accept_one(in_ms(200), &why);
  CHECK_FALSE(accepted);
  CHECK(why == "no connection on port " + port +
                   " before the phase timeout (is the tool started as client, pointed at this host?)");

  auto open = TcpListener::open(0, &why);
  REQUIRE_MESSAGE(open, why);
  auto tool = TcpPeer::dial("127.0.0.1", open->port(), in_ms(5000), &why);
  REQUIRE_MESSAGE(tool, why);
  auto silent = open->accept_one(in_ms(5000), &why);
  REQUIRE_MESSAGE(silent, why);
  CHECK_FALSE(silent->receive(kPingpongMessageBytes, in_ms(200), &why));
  CHECK(why.find("before the phase timeout (0 of 52 bytes)") != std::string::npos);

  CHECK_FALSE(TcpPeer::dial("127.0.0.1", 1, in_ms(500), &why));
  CHECK(why.find("cannot connect to 127.0.0.1:1: Connection refused") == 0);
}

TEST_CASE("a port another socket listens on is refused with the port and the reason") {
  std::string why;
  auto first = TcpListener::open(0, &why);
  REQUIRE_MESSAGE(first, why);
  auto second = TcpListener::open(first->port(), &why);
  CHECK_FALSE(second);
  CHECK(why == "cannot listen on port " + std::to_string(first->port()) + ": Address already in use");
}

TEST_CASE("a listener told where the tool connects from closes any other connection, names it, and waits on") {
  std::string why;
  auto listener = TcpListener::open(0, &why);
  REQUIRE_MESSAGE(listener, why);
  // This test's connections come from 127.0.0.1; the tool is said to be at 127.0.0.2.
  auto stranger = TcpPeer::dial("127.0.0.1", listener->port(), in_ms(5000), &why);
  REQUIRE_MESSAGE(stranger, why);
  std::vector<std::string> refused;
  auto got = listener->accept_one(in_ms(300), &why, "127.0.0.2", &refused);
  CHECK_FALSE(got);
  REQUIRE(refused.size() == 1);
  CHECK(refused[0].rfind("127.0.0.1:", 0) == 0);
  CHECK(why == "no connection from 127.0.0.2 on port " + std::to_string(listener->port()) +
                   " before the phase timeout; refused " + refused[0]);
  // The stranger sees its connection closed, without a byte.
  CHECK_FALSE(stranger->receive(1, in_ms(5000), &why));
  CHECK(why.find("closed the connection after 0 of 1 bytes") != std::string::npos);
}

TEST_CASE("a listener told where the tool connects from takes the tool's connection") {
  std::string why;
  auto listener = TcpListener::open(0, &why);
  REQUIRE_MESSAGE(listener, why);
  auto tool = TcpPeer::dial("127.0.0.1", listener->port(), in_ms(5000), &why);
  REQUIRE_MESSAGE(tool, why);
  std::vector<std::string> refused;
  auto got = listener->accept_one(in_ms(5000), &why, "127.0.0.1", &refused);
  REQUIRE_MESSAGE(got, why);
  CHECK(refused.empty());
  CHECK(got->remote().rfind("127.0.0.1:", 0) == 0);
}
