// How the data path hands sends to the device (dataplane/send_path.h) and the doorbell nudge
// of the traffic loop and the stream (dataplane/send_queue_nudge.h), against rxe in the lab: the extended post API
// (ibv_wr_*) and ibv_post_send move the same bytes for every opcode, and an empty doorbell
// ring is harmless.
#include <arpa/inet.h>
#include <doctest/doctest.h>

#include <chrono>
#include <cstring>
#include <span>
#include <thread>

#include "dataplane/pattern.h"
#include "dataplane/post.h"
#include "dataplane/send_path.h"
#include "dataplane/testbed.h"
#include "dataplane/clock.h"
#include "dataplane/send_queue_nudge.h"
#include "dataplane/stream.h"
#include "dataplane/error.h"
#include "dataplane/pingpong.h"
#include "pingpong_pair.h"
#include "test_threads.h"

using namespace qpo::dataplane;

namespace {

constexpr size_t kMr = 1 << 16;

struct Loopback {
  Testbed tb;
  explicit Loopback(const std::string& type, bool old_post_send = false) {
    tb.use_old_post_send(old_post_send);
    tb.add_mr("ma", kMr);
    tb.add_mr("mb", kMr);
    tb.add_cq("ca", 256);
    tb.add_cq("cb", 256);
    tb.add_qp("a", {type, "ca", "ca"});
    tb.add_qp("b", {type, "cb", "cb"});
    tb.connect("a", "b");
  }
  Endpoint& a() { return tb["a"]; }
  Endpoint& b() { return tb["b"]; }
  uint8_t* mem(const char* mr) { return tb[mr[1] == 'a' ? "a" : "b"].local_mrs[mr].data; }
};

// Waits (at most 2 s) for one completion on cq; returns it.
ibv_wc reap(ibv_cq* cq) {
  ibv_wc wc{};
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (ibv_poll_cq(cq, 1, &wc) == 0)
    if (std::chrono::steady_clock::now() > until) FAIL("no completion within 2 s");
  return wc;
}

SendRequest request(Loopback& l, Op op, uint64_t offset, uint32_t length) {
  SendRequest r;
  r.op = op;
  r.num_sge = 1;
  r.sge[0] = {&l.a().local_mrs["ma"], offset, length};
  r.remote = &l.a().remote_mrs["mb"];
  r.remote_offset = offset;
  return r;
}

// One receive on b for a UD message of `bytes`, at the start of mb (GRH room first).
void post_receive(Loopback& l, uint32_t bytes) {
  RecvRequest rr;
  rr.num_sge = 1;
  rr.sge[0] = {&l.b().local_mrs["mb"], 0, bytes + kGrhBytes};
  post_recvs(l.b(), std::span<const RecvRequest>(&rr, 1));
}

void post_and_reap(Loopback& l, const SendRequest& r) {
  CAPTURE(op_name(r.op));
  CAPTURE(r.num_sge);
  CAPTURE(r.inline_data);
  post_sends(l.a(), std::span<const SendRequest>(&r, 1));
  ibv_wc wc = reap(l.a().send_cq);
  REQUIRE(wc.status == IBV_WC_SUCCESS);
}

// a's QP to `state` with only IBV_QP_STATE (RTS <-> SQD); the errno or 0.
int move_a_to(Loopback& l, ibv_qp_state state) {
  ibv_qp_attr attr{};
  attr.qp_state = state;
  return ibv_modify_qp(l.a().qp, &attr, IBV_QP_STATE);
}

// A stream of 64-byte sends from ma, 4 outstanding.
StreamConfig sends_of_64(uint64_t iterations, int timeout_ms) {
  StreamConfig c;
  c.op = Op::Send;
  c.size = 64;
  c.iterations = iterations;
  c.depth = 4;
  c.timeout_ms = timeout_ms;
  c.local_mr = "ma";
  return c;
}

// A write ping-pong between a (initiator) and b, data checked at the end: both sources hold
// fill_pattern(seed 9) at 4096, the peer's writes land at 0.
testing::PingPongPair write_pingpong(Loopback& l, uint32_t size, uint32_t signal_every, uint32_t inline_size) {
  fill_pattern(l.mem("ma") + 4096, size, 9);
  fill_pattern(l.mem("mb") + 4096, size, 9);
  auto cfg = [&](bool initiator, const char* local, const char* remote) {
    PingPongConfig c;
    c.op = Op::Write;
    c.initiator = initiator;
    c.size = size;
    c.iterations = 300;
    c.signal_every = signal_every;
    c.inline_size = inline_size;
    c.local_mr = local;
    c.remote_mr = remote;
    c.local_offset = 4096;
    c.recv_offset = 0;
    c.check_seed = 9;
    c.timeout_ms = 5000;
    return c;
  };
  return testing::run_pingpong_pair({&l.a(), nullptr}, cfg(true, "ma", "mb"), {&l.b(), nullptr},
                                    cfg(false, "mb", "ma"));
}

}  // namespace

TEST_CASE("RC, UC and UD QPs on rxe take the extended post API; --old-post-send keeps ibv_post_send") {
  for (const char* type : {"RC", "UC", "UD"}) {
    CAPTURE(type);
    CHECK(Loopback(type).a().qpx != nullptr);
    CHECK(Loopback(type, true).a().qpx == nullptr);
  }
}

TEST_CASE("both post paths move the same bytes: write (1 and 2 SGEs, inline, inline from 2 SGEs), read, cas, faa") {
  for (bool old_path : {false, true}) {
    CAPTURE(old_path);
    Loopback l("RC", old_path);
    uint8_t* a = l.mem("ma");
    uint8_t* b = l.mem("mb");
    fill_pattern(a, 4096, 7);

    post_and_reap(l, request(l, Op::Write, 0, 1024));
    CHECK(std::memcmp(a, b, 1024) == 0);

    SendRequest two = request(l, Op::Write, 1024, 100);
    two.num_sge = 2;
    two.sge[1] = {&l.a().local_mrs["ma"], 2048, 28};
    post_and_reap(l, two);
    CHECK(std::memcmp(b + 1024, a + 1024, 100) == 0);
    CHECK(std::memcmp(b + 1124, a + 2048, 28) == 0);

    SendRequest inl = request(l, Op::Write, 3000, 64);
    inl.inline_data = true;
    post_and_reap(l, inl);
    CHECK(std::memcmp(b + 3000, a + 3000, 64) == 0);

    // rxe's list setters get the length wrong: send_path takes ibv_post_send for 2 SGEs.
    SendRequest inl2 = request(l, Op::Write, 3100, 40);
    inl2.inline_data = true;
    inl2.num_sge = 2;
    inl2.sge[1] = {&l.a().local_mrs["ma"], 3500, 24};
    post_and_reap(l, inl2);
    CHECK(std::memcmp(b + 3100, a + 3100, 40) == 0);
    CHECK(std::memcmp(b + 3140, a + 3500, 24) == 0);

    fill_pattern(b + 8192, 512, 9);
    post_and_reap(l, request(l, Op::Read, 8192, 512));
    CHECK(check_pattern(a + 8192, 512, 9) == -1);

    uint64_t* remote = reinterpret_cast<uint64_t*>(b + 16384);
    *remote = 41;
    SendRequest faa = request(l, Op::FetchAdd, 16384, 8);
    faa.compare_add = 1;
    post_and_reap(l, faa);
    CHECK(*remote == 42);
    CHECK(*reinterpret_cast<uint64_t*>(a + 16384) == 41);  // the value before

    SendRequest cas = request(l, Op::CmpSwap, 16384, 8);
    cas.compare_add = 42;
    cas.swap = 7;
    post_and_reap(l, cas);
    CHECK(*remote == 7);
  }
}

TEST_CASE("a UD send with immediate data through ibv_wr_* arrives with its GRH room, length and imm") {
  Loopback l("UD");
  REQUIRE(l.a().qpx != nullptr);
  fill_pattern(l.mem("ma"), 256, 3);
  post_receive(l, 256);
  SendRequest s = request(l, Op::SendImm, 0, 256);
  s.remote = nullptr;
  s.imm = 0x1234;
  post_and_reap(l, s);
  ibv_wc wc = reap(l.b().recv_cq);
  REQUIRE(wc.status == IBV_WC_SUCCESS);
  CHECK(wc.byte_len == 256 + kGrhBytes);
  CHECK((wc.wc_flags & IBV_WC_WITH_IMM) != 0);
  CHECK(ntohl(wc.imm_data) == 0x1234);
  CHECK(check_pattern(l.mem("mb") + kGrhBytes, 256, 3) == -1);
}

TEST_CASE("ringing the doorbell with nothing queued succeeds and the QP goes on") {
  Loopback l("UD");
  REQUIRE(l.a().qpx != nullptr);
  CHECK(ring_doorbell(l.a().qpx) == 0);
  CHECK(ring_doorbell(l.a().qpx) == 0);
  post_receive(l, 64);
  SendRequest s = request(l, Op::Send, 0, 64);
  s.remote = nullptr;
  post_and_reap(l, s);
  CHECK(reap(l.b().recv_cq).status == IBV_WC_SUCCESS);
  ibv_wc none;
  CHECK(ibv_poll_cq(l.a().send_cq, 1, &none) == 0);  // the empty rings completed nothing
}

TEST_CASE("the nudge rings a UD send queue quiet for 1 s, at most once a second, and counts the restart") {
  Loopback l("UD");
  REQUIRE(l.a().qpx != nullptr);
  auto at = [t0 = clock::ticks()](int ms) { return t0 + clock::from_seconds(ms / 1000.0); };
  SendQueueNudge n(l.a().qpx, IBV_QPT_UD);
  n.observe(1, false, at(0));
  n.observe(1, false, at(900));
  CHECK(n.rings() == 0);
  n.observe(1, false, at(1100));
  CHECK(n.rings() == 1);
  n.observe(1, false, at(1500));
  CHECK(n.rings() == 1);
  n.observe(1, true, at(1600));
  CHECK(n.restarts() == 1);
  CHECK(n.describe() ==
        "the device left a send unprocessed for 1000 ms; rang the send queue's doorbell again 1 time, and it went on "
        "(1 restart)");
}

TEST_CASE("the nudge stays silent for RC (its retransmit timer runs the requester) and for an idle queue") {
  Loopback l("RC");
  auto at = [t0 = clock::ticks()](int ms) { return t0 + clock::from_seconds(ms / 1000.0); };
  SendQueueNudge rc(l.a().qpx, IBV_QPT_RC);
  CHECK_FALSE(rc.active());
  rc.observe(1, false, at(0));
  rc.observe(1, false, at(5000));
  CHECK(rc.rings() == 0);
  CHECK(rc.describe() == "");

  SendQueueNudge idle(l.a().qpx, IBV_QPT_UC);
  idle.observe(0, false, at(0));
  idle.observe(0, false, at(5000));
  CHECK(idle.rings() == 0);
  idle.observe(1, false, at(5500));  // quiet since the last idle pass only
  CHECK(idle.rings() == 0);
}

TEST_CASE("a nudge that does not help says so") {
  Loopback l("UD");
  auto at = [t0 = clock::ticks()](int ms) { return t0 + clock::from_seconds(ms / 1000.0); };
  SendQueueNudge n(l.a().qpx, IBV_QPT_UD);
  n.observe(1, false, at(0));
  n.observe(1, false, at(1000));
  n.observe(1, false, at(2000));
  CHECK(n.rings() == 2);
  CHECK(n.describe() ==
        "the device left a send unprocessed for 1000 ms; rang the send queue's doorbell again 2 times, without effect");
}

TEST_CASE("a UD stream whose queue the device does not work on rings its doorbell each second and says so when it gives up") {
  // A QP in SQD takes posts but its requester sends nothing: a stand-in for rxe's lost wake-up
  // that the nudge cannot cure, so the stream times out with the rings in its message.
  Loopback l("UD");
  REQUIRE(move_a_to(l, IBV_QPS_SQD) == 0);
  StreamLane lane{&l.a(), nullptr};
  CHECK_THROWS_WITH_AS(run_stream(std::span<const StreamLane>(&lane, 1), sends_of_64(4, 2500)),
                       doctest::Contains("4 send WRs outstanding on 'a' (0 completed); QP 'a': the device left a send "
                                         "unprocessed for 1000 ms; rang the send queue's doorbell again 2 times, "
                                         "without effect"),
                       DataplaneError);
}

TEST_CASE("a UD stream that goes on after a ring reports the restart in its result's notes") {
  Loopback l("UD");
  REQUIRE(move_a_to(l, IBV_QPS_SQD) == 0);
  // Back to RTS after the first ring (at ~1 s): the queued sends go out, then the rest.
  qpo::testing::WorkerThread resume([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    move_a_to(l, IBV_QPS_RTS);
  });
  StreamLane lane{&l.a(), nullptr};
  StreamResult r = run_stream(std::span<const StreamLane>(&lane, 1), sends_of_64(8, 5000));
  CHECK(resume.join() == "");
  CHECK(r.tx.ops == 8);
  REQUIRE(r.notes.size() == 1);
  CHECK(r.notes[0].rfind("QP 'a': the device left a send unprocessed for 1000 ms; rang the send queue's doorbell again ", 0) == 0);
  CHECK(r.notes[0].find(", and it went on (1 restart)") != std::string::npos);
}

TEST_CASE("write ping-pong: the direct loop (every write signaled, ibv_wr_*) and the general one land the same data") {
  // signal_every 1 on the extended API takes the direct loop; one signaled write in 3, or
  // ibv_post_send, the general one. Sizes with and without inline; each side checks what the
  // other wrote (all but the counter byte).
  struct Case {
    bool old_post_send;
    uint32_t signal_every, size, inline_size;
  };
  for (Case c : {Case{false, 1, 2, 0}, Case{false, 1, 64, 64}, Case{false, 1, 1024, 0}, Case{false, 3, 1024, 0},
                 Case{true, 1, 1024, 0}, Case{true, 1, 64, 64}}) {
    CAPTURE(c.old_post_send);
    CAPTURE(c.signal_every);
    CAPTURE(c.size);
    Loopback l("RC", c.old_post_send);
    auto [ri, rt] = write_pingpong(l, c.size, c.signal_every, c.inline_size);
    CHECK(ri.iterations == 300);
    CHECK(rt.iterations == 300);
    CHECK(ri.lat.samples == 300);
    CHECK(ri.halved);
    CHECK(ri.checked == 1);
    CHECK(rt.checked == 1);
    CHECK(std::memcmp(l.mem("ma"), l.mem("mb") + 4096, c.size - 1) == 0);
  }
}

TEST_CASE("write ping-pong passes over the completion of a script's own WR left on its CQ") {
  // A signaled write the script posted itself (wr_id without the data path's tag) completes on
  // a's CQ before the ping-pong starts; the direct loop must not take it for its own write's.
  Loopback l("RC");
  SendRequest own = request(l, Op::Write, 8192, 16);
  own.id = 77;
  post_sends(l.a(), std::span<const SendRequest>(&own, 1));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // completed, not yet polled
  auto [ri, rt] = write_pingpong(l, 64, 1, 0);
  CHECK(ri.iterations == 300);
  CHECK(rt.iterations == 300);
  ibv_wc wc{};
  CHECK(ibv_poll_cq(l.a().send_cq, 1, &wc) == 0);  // every completion reaped, none left over
}
