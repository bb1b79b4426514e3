// perftest's out-of-band units and the conversation qpo speaks over them (src/interop), on
// loopback: a qpo client against a qpo server, each unit checked against the bytes the tool
// writes (perftest_communication.c, Debian's perftest 6.06).
#include <doctest/doctest.h>

#include <atomic>
#include <deque>
#include <memory>
#include <vector>
#include <chrono>
#include <string>
#include <thread>

#include "interop/perftest_message.h"
#include "interop/perftest_talk.h"
#include "interop/tcp_peer.h"
#include "test_threads.h"

using namespace qpo::interop;

namespace {

PerftestKeys sample_keys() {
  PerftestKeys k;
  k.lid = 0;
  k.out_reads = 1;
  k.qpn = 0x11;
  k.psn = 0x4d3639;
  k.rkey = 0x21c;
  k.vaddr = 0x55dbd3344000;
  k.gid = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 1, 2};
  return k;
}

Deadline in_ms(int ms) { return std::chrono::steady_clock::now() + std::chrono::milliseconds(ms); }

}  // namespace

TEST_CASE("perftest's keys with a GID are its 108 bytes: six fields, the GID's 16 bytes, the SRQ number, a NUL") {
  std::string m = format_perftest_keys(sample_keys());
  CHECK(m.size() == kPerftestKeysBytes);
  CHECK(m == std::string("0000:0001:000011:4d3639:0000021c:000055dbd3344000:"
                         "00:00:00:00:00:00:00:00:00:00:ff:ff:0a:00:01:02:00000000:") + '\0');
}

TEST_CASE("the tool's keys parse back to its values, and read as it prints them") {
  std::string why;
  auto k = parse_perftest_keys(format_perftest_keys(sample_keys()), &why);
  REQUIRE_MESSAGE(k, why);
  CHECK(k->qpn == 0x11);
  CHECK(k->psn == 0x4d3639);
  CHECK(k->rkey == 0x21c);
  CHECK(k->vaddr == 0x55dbd3344000);
  CHECK(k->gid == sample_keys().gid);
  CHECK(describe(*k) == "QPN 0x000011, PSN 0x4d3639, RKey 0x0000021c, VAddr 0x000055dbd3344000, GID ::ffff:10.0.1.2");
}

TEST_CASE("keys that are not the tool's are refused with what is wrong") {
  std::string why;
  CHECK_FALSE(parse_perftest_keys(std::string(59, 'x'), &why));
  CHECK(why == "59 bytes, not the 108 of perftest's keys with a GID");
  std::string bad = format_perftest_keys(sample_keys());
  bad[10] = 'z';  // in the QPN
  CHECK_FALSE(parse_perftest_keys(bad, &why));
  CHECK(why == "QPN 'z00011' is not up to 6 hex digits");
}

TEST_CASE("over the tool's RDMA connection (-R) the keys are its struct pingpong_dest: 56 bytes, big-endian fields") {
  std::string m = format_perftest_dest(sample_keys());
  REQUIRE(m.size() == kPerftestDestBytes);
  const std::string want = std::string("\0\0\0\0" "\0\0\0\x01" "\0\0\0\x11" "\0\x4d\x36\x39" "\0\0\x02\x1c", 20) +
                           std::string(4, '\0') + std::string("\0\0\x55\xdb\xd3\x34\x40\0", 8) +
                           std::string("\0\0\0\0\0\0\0\0\0\0\xff\xff\x0a\0\x01\x02", 16) + std::string(8, '\0');
  CHECK(m == want);
  std::string why;
  auto back = parse_perftest_dest(m, &why);
  REQUIRE_MESSAGE(back, why);
  CHECK(describe(*back) == describe(sample_keys()));
  CHECK_FALSE(parse_perftest_dest(m.substr(0, 55), &why));
  CHECK(why == "55 bytes, not perftest's 56");
}

namespace {

// perftest -R's carrier in memory: what qpo sends is kept, what the tool sends is queued, and
// the order of both is written down.
class FakeRdmaPipe final : public PerftestPipe {
 public:
  std::deque<std::string> incoming;
  std::vector<std::string> sent, order;
  bool send(std::string_view bytes, Deadline, std::string*) override {
    sent.emplace_back(bytes);
    order.push_back("send " + std::to_string(bytes.size()));
    return true;
  }
  std::optional<std::string> receive(size_t n, Deadline, std::string* why, const std::atomic<bool>*) override {
    order.push_back("receive " + std::to_string(n));
    if (incoming.empty()) {
      *why = "nothing came";
      return std::nullopt;
    }
    std::string unit = incoming.front();
    incoming.pop_front();
    return unit;
  }
  const std::string& remote() const override { return remote_; }
  bool rdma() const override { return true; }

 private:
  std::string remote_ = "10.0.1.2";
};

}  // namespace

TEST_CASE("with -R a server's hand-shake comes in two halves: the tool's 56-byte keys read, qpo's answer sent later") {
  auto pipe = std::make_unique<FakeRdmaPipe>();
  FakeRdmaPipe* fake = pipe.get();
  PerftestKeys tool = sample_keys();
  tool.qpn = 0x22;
  fake->incoming = {format_perftest_dest(tool), format_perftest_dest(tool)};
  PerftestTalk talk(std::move(pipe), /*client=*/false);
  std::string why;
  auto theirs = talk.read_keys(in_ms(1000), &why);
  REQUIRE_MESSAGE(theirs, why);
  CHECK(theirs->qpn == 0x22);
  CHECK(fake->sent.empty());  // nothing answered until qpo says so (it listens first)
  REQUIRE(talk.answer_keys(sample_keys(), in_ms(1000), &why));
  REQUIRE(fake->sent.size() == 1);
  CHECK(fake->sent[0] == format_perftest_dest(sample_keys()));
  // The close is one more hand-shake and no "done": the tool reads nothing after it.
  REQUIRE(talk.close(sample_keys(), in_ms(1000), &why));
  CHECK(fake->order == std::vector<std::string>{"receive 56", "send 56", "receive 56", "send 56"});
}

TEST_CASE("with -R a client's keys go out first, as perftest's struct, and the tool's come back the same way") {
  auto pipe = std::make_unique<FakeRdmaPipe>();
  FakeRdmaPipe* fake = pipe.get();
  fake->incoming = {format_perftest_dest(sample_keys())};
  PerftestTalk talk(std::move(pipe), /*client=*/true);
  std::string why;
  auto theirs = talk.keys(sample_keys(), in_ms(1000), &why);
  REQUIRE_MESSAGE(theirs, why);
  CHECK(describe(*theirs) == describe(sample_keys()));
  CHECK(fake->order == std::vector<std::string>{"send 56", "receive 56"});
  CHECK_FALSE(talk.keys(sample_keys(), in_ms(1000), &why));  // the tool sent nothing more
  CHECK(why == "waiting for the tool's keys: nothing came");
}

TEST_CASE("the version unit is 16 NUL-padded bytes; a tool older than 5.70 is refused") {
  CHECK(format_perftest_version("6.06") == std::string("6.06") + std::string(12, '\0'));
  std::string why;
  auto v = parse_perftest_version(format_perftest_version("6.06"), &why);
  REQUIRE(v);
  CHECK(*v == "6.06");
  CHECK_FALSE(parse_perftest_version(format_perftest_version("5.60"), &why));
  CHECK(why == "perftest version '5.60' is older than 5.70, the oldest whose exchange qpo speaks");
}

TEST_CASE("the MTU unit is the ibv_mtu enum as one digit and a NUL") {
  CHECK(format_perftest_mtu(3) == std::string("3\0", 2));
  CHECK(parse_perftest_mtu(std::string("5\0", 2)) == 5);
  CHECK_FALSE(parse_perftest_mtu(std::string("9\0", 2)));
}

TEST_CASE("the report's units are big-endian: size and iterations as integers, the rates as doubles") {
  PerftestReport r{65536, 200, 21.93, 15.9, 0.000254};
  auto units = format_perftest_report(r);
  CHECK(units[0] == std::string("\0\0\0\0\0\1\0\0", 8));
  CHECK(units[1] == std::string("\0\0\0\0\0\0\0\xc8", 8));
  CHECK(units[3] == std::string("\x40\x2f\xcc\xcc\xcc\xcc\xcc\xcd", 8));  // 15.9, IEEE 754 big-endian
  auto back = parse_perftest_report(units);
  CHECK(back.size == 65536);
  CHECK(back.iterations == 200);
  CHECK(back.bw_peak == 21.93);
  CHECK(back.bw_avg == 15.9);
  CHECK(back.msg_rate == 0.000254);
}

TEST_CASE("a whole bandwidth conversation: opening, keys, report and close, the client writing first") {
  std::string why;
  auto listener = TcpListener::open(0, &why);
  REQUIRE_MESSAGE(listener, why);
  PerftestKeys server_keys = sample_keys();
  server_keys.qpn = 0x22;
  std::string server_error;
  std::optional<PerftestOpening> server_saw;
  std::optional<PerftestKeys> server_got;
  std::optional<PerftestReport> server_report;
  qpo::testing::WorkerThread server([&] {
    try {
      std::string e;
      auto peer = listener->accept_one(in_ms(10000), &e);
      if (!peer) {
        server_error = e;
        return;
      }
      PerftestTalk talk(std::make_unique<TcpPipe>(std::move(*peer)), /*client=*/false);
      server_saw = talk.opening(5, in_ms(10000), &e);
      if (server_saw) server_got = talk.keys(server_keys, in_ms(10000), &e);
      if (server_got) server_report = talk.reports(PerftestReport{}, in_ms(10000), &e);
      if (!server_report || !talk.close(server_keys, in_ms(10000), &e)) server_error = e;
    } catch (const std::exception& e) {
      server_error = e.what();
    } catch (...) {  // nothing leaves the thread: its error is asserted after the join
      server_error = "an exception that is not a std::exception";
    }
  });
  auto peer = TcpPeer::dial("127.0.0.1", listener->port(), in_ms(10000), &why);
  std::optional<PerftestOpening> opening;
  std::optional<PerftestKeys> theirs;
  bool closed = false;
  if (peer) {
    PerftestTalk talk(std::make_unique<TcpPipe>(std::move(*peer)), /*client=*/true);
    opening = talk.opening(3, in_ms(10000), &why);
    if (opening) theirs = talk.keys(sample_keys(), in_ms(10000), &why);
    if (theirs && talk.reports(PerftestReport{65536, 200, 21.93, 15.9, 0.000254}, in_ms(10000), &why))
      closed = talk.close(sample_keys(), in_ms(10000), &why);
  }
  CHECK(server.join() == "");
  CHECK(server_error == "");
  REQUIRE_MESSAGE(closed, why);
  CHECK(opening->version == "6.06");
  CHECK(opening->cycle_buffer == kPerftestCycleBuffer);
  CHECK(opening->cache_line == kPerftestCacheLine);
  CHECK(opening->mtu == 5);  // the server's
  REQUIRE(server_saw);
  CHECK(server_saw->mtu == 3);  // the client's
  REQUIRE(theirs);
  CHECK(theirs->qpn == 0x22);
  REQUIRE(server_got);
  CHECK(server_got->qpn == 0x11);
  REQUIRE(server_report);
  CHECK(server_report->iterations == 200);
  CHECK(server_report->bw_avg == 15.9);
}

TEST_CASE("a server waiting for the tool's run stops soon after its stop flag is set") {
  std::string why;
  auto listener = TcpListener::open(0, &why);
  REQUIRE_MESSAGE(listener, why);
  auto tool = TcpPeer::dial("127.0.0.1", listener->port(), in_ms(5000), &why);  // never writes
  REQUIRE_MESSAGE(tool, why);
  auto peer = listener->accept_one(in_ms(5000), &why);
  REQUIRE_MESSAGE(peer, why);
  std::atomic<bool> stop{true};
  PerftestTalk talk(std::make_unique<TcpPipe>(std::move(*peer)), /*client=*/false);
  talk.set_stop(&stop);
  CHECK_FALSE(talk.keys(sample_keys(), in_ms(60000), &why));
  CHECK(why.rfind("waiting for the tool's keys: stopped while waiting for 127.0.0.1:", 0) == 0);
}

TEST_CASE("a tool that is not perftest (ibv_rc_pingpong's server answers) is refused at the version, saying so") {
  std::string why;
  auto listener = TcpListener::open(0, &why);
  REQUIRE_MESSAGE(listener, why);
  std::string server_error;
  qpo::testing::WorkerThread server([&] {
    try {
      std::string e;
      auto peer = listener->accept_one(in_ms(10000), &e);
      // ibv_rc_pingpong's server reads 52 bytes first; qpo sent 16: it answers with its own
      // message anyway here, as a stranger on the port would.
      if (!peer || !peer->send("0000:000011:5e85b4:00000000000000000000ffff0a000102", &e)) server_error = e;
    } catch (...) {  // nothing leaves the thread: its error is asserted after the join
      server_error = "an exception";
    }
  });
  auto peer = TcpPeer::dial("127.0.0.1", listener->port(), in_ms(10000), &why);
  std::optional<PerftestOpening> opening;
  if (peer) {
    PerftestTalk talk(std::make_unique<TcpPipe>(std::move(*peer)), /*client=*/true);
    opening = talk.opening(3, in_ms(10000), &why);
  }
  CHECK(server.join() == "");
  CHECK(server_error == "");
  CHECK_FALSE(opening);
  CHECK(why == "sent '0000:000011:5e85' where perftest sends its version: is the tool on that port perftest?");
}
