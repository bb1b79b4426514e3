// The C++ data path against a real kernel RDMA device (rxe in the lab): every engine, data
// checked, and the error paths that need a device (bad rkey, RNR, shared CQs).
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <span>
#include <thread>

#include "dataplane/clock.h"
#include "dataplane/error.h"
#include "dataplane/pattern.h"
#include "dataplane/pingpong.h"
#include "dataplane/post.h"
#include "dataplane/stream.h"
#include "dataplane/testbed.h"
#include "pingpong_pair.h"
#include "test_threads.h"

using namespace qpo::dataplane;
using qpo::dataplane::testing::run_pingpong_pair;
using qpo::testing::Rendezvous;
using qpo::testing::WorkerThread;

namespace {

constexpr size_t kMr = 1 << 20;

// A loopback RC (or UC/UD) pair a <-> b, each with its own MR and CQ (or one shared CQ).
struct Pair {
  Testbed tb;
  // extended_ca: a's CQ made with ibv_create_cq_ex (IBV_WC_STANDARD_FLAGS).
  explicit Pair(const std::string& type = "RC", bool shared_cq = false, bool channels = false, bool extended_ca = false) {
    tb.add_mr("ma", kMr);
    tb.add_mr("mb", kMr);
    tb.add_cq("ca", 4096, channels, extended_ca);
    if (!shared_cq) tb.add_cq("cb", 4096, channels);
    std::string cb = shared_cq ? "ca" : "cb";
    tb.add_qp("a", {type, "ca", "ca"});
    tb.add_qp("b", {type, cb, cb});
    tb.connect("a", "b");
  }
  Endpoint& a() { return tb["a"]; }
  Endpoint& b() { return tb["b"]; }
};

StreamResult stream1(Endpoint& ep, RecvPool* pool, const StreamConfig& cfg, const CqAccess& acc = {}) {
  StreamLane lane{&ep, pool};
  return run_stream(std::span<const StreamLane>(&lane, 1), cfg, acc);
}

}  // namespace

TEST_CASE("write stream: depth, moderation, post lists; data lands") {
  Pair p;
  fill_pattern(p.a().local_mrs["ma"].data, 65536, 11);
  StreamConfig c;
  c.op = Op::Write;
  c.size = 65536;
  c.iterations = 200;
  c.depth = 64;
  c.signal_every = 8;
  c.post_list = 4;
  c.local_mr = "ma";
  c.remote_mr = "mb";
  StreamResult r = stream1(p.a(), nullptr, c);
  CHECK(r.tx.ops == 200);
  CHECK(r.tx.bytes == 200ull * 65536);
  CHECK(r.tx.bw_avg > 0);
  CHECK(r.tx.bw_peak >= r.tx.bw_avg * 0.99);
  CHECK(check_pattern(p.b().local_mrs["mb"].data, 65536, 11) == -1);

  // Iterations not a multiple of signal_every: the last WR is signaled, the run drains.
  c.iterations = 13;
  c.size = 64;
  c.inline_size = 64;
  r = stream1(p.a(), nullptr, c);
  CHECK(r.tx.ops == 13);
}

TEST_CASE("stream: the clock is calibrated before ready, so the ~20 ms calibration is never inside the timed window") {
  Pair p;
  qpo::dataplane::clock::forget_calibration_for_tests();
  StreamConfig c;
  c.op = Op::Write;
  c.size = 64;
  c.iterations = 20;
  c.local_mr = "ma";
  c.remote_mr = "mb";
  bool calibrated_at_ready = false;
  c.ready = [&] { calibrated_at_ready = qpo::dataplane::clock::calibrated(); };
  StreamResult r = stream1(p.a(), nullptr, c);
  CHECK(r.tx.ops == 20);
  CHECK(calibrated_at_ready);
}

TEST_CASE("ping-pong: the clock is calibrated before ready (the barrier), not after it") {
  Pair p;
  qpo::dataplane::clock::forget_calibration_for_tests();
  RecvPool pa;
  PingPongConfig c;
  c.op = Op::Read;  // the initiator alone
  c.size = 64;
  c.iterations = 20;
  c.local_mr = "ma";
  c.remote_mr = "mb";
  bool calibrated_at_ready = false;
  c.ready = [&] { calibrated_at_ready = qpo::dataplane::clock::calibrated(); };
  PingPongResult r = run_pingpong({&p.a(), &pa}, c);
  CHECK(r.iterations == 20);
  CHECK(calibrated_at_ready);
}

TEST_CASE("send stream with a receiver thread, data checked per receive") {
  Pair p;
  fill_pattern(p.a().local_mrs["ma"].data, 4096, 5);
  RecvPool pool_b;
  Rendezvous meet;
  StreamConfig rx;
  rx.op = Op::Recv;
  rx.size = 4096;
  rx.iterations = 500;
  rx.depth = 64;
  rx.local_mr = "mb";
  rx.check_seed = 5;
  rx.ready = meet.ready();
  StreamResult rr;
  WorkerThread t([&] { rr = stream1(p.b(), &pool_b, rx); }, &meet);
  StreamConfig tx;
  tx.op = Op::Send;
  tx.size = 4096;
  tx.iterations = 500;
  tx.depth = 32;
  tx.local_mr = "ma";
  tx.ready = meet.ready();
  StreamResult tr = stream1(p.a(), nullptr, tx);
  CHECK(t.join() == "");
  CHECK(tr.tx.ops == 500);
  CHECK(rr.rx.ops == 500);
  CHECK(rr.rx_checked == 500);
  CHECK(rr.rx.bytes == 500ull * 4096);
  CHECK(pool_b.outstanding() == 64);  // left posted for the next stream
}

TEST_CASE("send stream on one CQ shared by both workers goes through the router") {
  Pair p("RC", /*shared_cq=*/true);
  CqRouter router;
  router.assign(p.a().send_cq, p.a().qp->qp_num, 0);
  router.assign(p.b().recv_cq, p.b().qp->qp_num, 1);
  REQUIRE(router.shared(p.a().send_cq) != nullptr);
  fill_pattern(p.a().local_mrs["ma"].data, 256, 9);
  RecvPool pool_b;
  StreamConfig rx;
  rx.op = Op::Recv;
  rx.size = 256;
  rx.iterations = 300;
  rx.depth = 32;
  rx.local_mr = "mb";
  rx.check_seed = 9;
  Rendezvous meet;  // receives posted first
  rx.ready = meet.ready();
  StreamResult rr;
  WorkerThread t([&] { rr = stream1(p.b(), &pool_b, rx, {&router, 1}); }, &meet);
  StreamConfig tx;
  tx.op = Op::Send;
  tx.size = 256;
  tx.iterations = 300;
  tx.depth = 16;
  tx.local_mr = "ma";
  tx.ready = meet.ready();
  StreamResult tr = stream1(p.a(), nullptr, tx, {&router, 0});
  CHECK(t.join() == "");
  CHECK(tr.tx.ops == 300);
  CHECK(rr.rx_checked == 300);
  CHECK(router.dropped() == 0);
}

TEST_CASE("read and atomic streams") {
  Pair p;
  fill_pattern(p.b().local_mrs["mb"].data, 8192, 3);
  StreamConfig c;
  c.op = Op::Read;
  c.size = 8192;
  c.iterations = 100;
  c.depth = 16;
  c.local_mr = "ma";
  c.remote_mr = "mb";
  CHECK(stream1(p.a(), nullptr, c).tx.ops == 100);
  CHECK(check_pattern(p.a().local_mrs["ma"].data, 8192, 3) == -1);

  std::memset(p.b().local_mrs["mb"].data, 0, 8);
  c.op = Op::FetchAdd;
  c.size = 8;
  c.compare_add = 1;
  c.iterations = 1000;
  CHECK(stream1(p.a(), nullptr, c).tx.ops == 1000);
  uint64_t v;
  std::memcpy(&v, p.b().local_mrs["mb"].data, 8);
  CHECK(v == 1000);
}

TEST_CASE("duration mode drains and counts") {
  Pair p;
  StreamConfig c;
  c.op = Op::Write;
  c.size = 1024;
  c.duration = 0.5;
  c.depth = 32;
  c.signal_every = 7;
  c.local_mr = "ma";
  c.remote_mr = "mb";
  StreamResult r = stream1(p.a(), nullptr, c);
  CHECK(r.tx.ops > 0);
  CHECK(r.tx.seconds >= 0.45);
  CHECK(r.tx.bw_peak == 0);  // not computed in duration mode (as perftest)
}

TEST_CASE("per-WR hook: alternating write and read, early stop") {
  Pair p;
  StreamConfig c;
  c.op = Op::Write;
  c.size = 512;
  c.iterations = 100;
  c.depth = 16;
  c.signal_every = 4;
  c.local_mr = "ma";
  c.remote_mr = "mb";
  uint64_t reads = 0;
  c.hook = [&](uint64_t i, WrEdit& e) {
    if (i == 50) return false;
    if (i % 2) {
      e.op = Op::Read;
      ++reads;
    }
    e.remote_offset = (i % 8) * 512;
    return true;
  };
  StreamResult r = stream1(p.a(), nullptr, c);
  CHECK(r.hook_calls == 51);
  CHECK(reads == 25);
  CHECK(r.tx.ops >= 50);  // plus one closing WR when the stop fell on an unsignaled run
  CHECK(r.tx.ops <= 51);
}

TEST_CASE("per-WR hook asked in runs: the same WRs as one call each, runs never past depth") {
  Pair p;
  StreamConfig c;
  c.op = Op::Write;
  c.size = 512;
  c.iterations = 100;
  c.depth = 16;
  c.signal_every = 4;
  c.local_mr = "ma";
  c.remote_mr = "mb";
  uint64_t next = 0, reads = 0, runs = 0;
  size_t longest = 0;
  c.hook_run = [&](uint64_t first, std::span<WrEdit> out) -> size_t {
    CHECK(first == next);
    ++runs;
    longest = std::max(longest, out.size());
    for (size_t k = 0; k < out.size(); ++k) {
      uint64_t i = first + k;
      CHECK(out[k].op == Op::Write);  // each entry starts as the template
      CHECK(out[k].size == 512);
      if (i == 50) return k;
      if (i % 2) {
        out[k].op = Op::Read;
        ++reads;
      }
      out[k].remote_offset = (i % 8) * 512;
      ++next;
    }
    return out.size();
  };
  StreamResult r = stream1(p.a(), nullptr, c);
  CHECK(r.hook_calls == 51);  // 50 WRs and the call that ended the stream
  CHECK(reads == 25);
  CHECK(longest <= 16);
  CHECK(runs < 51);
  CHECK(r.tx.ops >= 50);
  CHECK(r.tx.ops <= 51);
}

TEST_CASE("a bad rkey completes with IBV_WC_REM_ACCESS_ERR naming the QP") {
  Pair p;
  p.a().remote_mrs["mb"].rkey ^= 0x5a5a00;
  StreamConfig c;
  c.op = Op::Write;
  c.size = 64;
  c.iterations = 10;
  c.local_mr = "ma";
  c.remote_mr = "mb";
  try {
    stream1(p.a(), nullptr, c);
    FAIL("expected a completion error");
  } catch (const DataplaneError& e) {
    CHECK(e.kind() == DataplaneError::Kind::Completion);
    CHECK(e.wc_status() == IBV_WC_REM_ACCESS_ERR);
    CHECK(std::string(e.what()).find("QP 'a'") != std::string::npos);
    CHECK(std::string(e.what()).find("IBV_WC_REM_ACCESS_ERR") != std::string::npos);
  }
}

TEST_CASE("a send nobody receives times out with a message, not a hang") {
  Pair p;
  StreamConfig c;
  c.op = Op::Send;
  c.size = 64;
  c.iterations = 4;
  c.timeout_ms = 300;
  c.local_mr = "ma";
  CHECK_THROWS_WITH_AS(stream1(p.a(), nullptr, c), doctest::Contains("no completion for 300 ms"), DataplaneError);
}

TEST_CASE("ping-pong latency: send, write, read") {
  for (Op op : {Op::Send, Op::Write, Op::Read}) {
    CAPTURE(op_name(op));
    Pair p;
    fill_pattern(p.a().local_mrs["ma"].data + 4096, 64, 21);
    fill_pattern(p.b().local_mrs["mb"].data + 4096, 64, 21);
    if (op == Op::Read) fill_pattern(p.b().local_mrs["mb"].data, 64, 21);
    RecvPool pa, pb;
    auto cfg = [&](bool initiator, const char* local, const char* remote) {
      PingPongConfig c;
      c.op = op;
      c.initiator = initiator;
      c.size = 64;
      c.iterations = 200;
      c.inline_size = 64;
      c.local_mr = local;
      c.remote_mr = remote;
      c.local_offset = op == Op::Read ? 0 : 4096;   // source (send/write) or destination (read)
      c.recv_offset = 0;
      c.check_seed = 21;
      return c;
    };
    // The target answers send and write; for read it only meets the initiator at the barrier.
    auto [ri, rt] = run_pingpong_pair({&p.a(), &pa}, cfg(true, "ma", "mb"), {&p.b(), &pb}, cfg(false, "mb", "ma"));
    CHECK(ri.iterations == 200);
    CHECK(ri.lat.samples == 200);
    CHECK(ri.lat.t_min > 0);
    CHECK(ri.lat.t_min <= ri.lat.t_typical);
    CHECK(ri.lat.t_typical <= ri.lat.p99);
    CHECK(ri.halved == (op != Op::Read));
    if (op != Op::Read) CHECK(rt.iterations == 200);
    CHECK((op == Op::Send ? ri.checked == 200 : ri.checked == 1));
  }
}

TEST_CASE("send ping-pong on separate send and receive CQs has a receive posted for every answer with rx_depth 1, 2 and 16") {
  // One signaled send in 3: its completion is reaped right after posting, on a send CQ of 4.
  // perftest's shape for send tests: a receive CQ of its own. Receives are topped up after
  // each post, except that an empty RQ is refilled before it: the peer's answer needs one.
  for (uint32_t depth : {1u, 2u, 16u}) {
    CAPTURE(depth);
    Testbed tb;
    tb.add_mr("ma", kMr);
    tb.add_mr("mb", kMr);
    for (const char* cq : {"sa", "sb"}) tb.add_cq(cq, 4);
    for (const char* cq : {"ra", "rb"}) tb.add_cq(cq, 64);
    tb.add_qp("a", {"RC", "sa", "ra"});
    tb.add_qp("b", {"RC", "sb", "rb"});
    tb.connect("a", "b");
    fill_pattern(tb["a"].local_mrs["ma"].data + 4096, 32, 5);
    fill_pattern(tb["b"].local_mrs["mb"].data + 4096, 32, 5);
    RecvPool pa, pb;
    auto cfg = [&](bool initiator, const char* local) {
      PingPongConfig c;
      c.op = Op::Send;
      c.initiator = initiator;
      c.size = 32;
      c.iterations = 300;
      c.rx_depth = depth;
      c.signal_every = 3;
      c.local_mr = local;
      c.local_offset = 4096;
      c.recv_offset = 0;
      c.check_seed = 5;
      c.timeout_ms = 5000;
      return c;
    };
    auto [ri, rt] = run_pingpong_pair({&tb["a"], &pa}, cfg(true, "ma"), {&tb["b"], &pb}, cfg(false, "mb"));
    CHECK(ri.iterations == 300);
    CHECK(rt.iterations == 300);
    CHECK(ri.checked == 300);
    CHECK(rt.checked == 300);
    CHECK(pa.outstanding() <= depth);  // never more than rx_depth (after the last answer maybe none)
  }
}

TEST_CASE("UD fan-in: two senders, one receiver with GRH room") {
  Testbed tb;
  tb.add_mr("m", kMr);
  tb.add_cq("c1", 1024);
  tb.add_cq("c2", 1024);
  tb.add_cq("cr", 1024);
  tb.add_qp("s1", {"UD", "c1", "c1"});
  tb.add_qp("s2", {"UD", "c2", "c2"});
  tb.add_qp("r", {"UD", "cr", "cr"});
  tb.connect("s1", "r");
  tb.connect("s2", "r");
  fill_pattern(tb["s1"].local_mrs["m"].data, 1024, 4);
  RecvPool pool;
  StreamConfig rx;
  rx.op = Op::Recv;
  rx.size = 1024;
  rx.iterations = 200;   // 2 x 100
  rx.depth = 256;
  rx.recv_offset = 65536;
  rx.check_seed = 4;
  Rendezvous meet;  // UD drops what finds no receive: all 200 are posted before a send
  rx.ready = meet.ready();
  StreamResult rr;
  WorkerThread t([&] { rr = stream1(tb["r"], &pool, rx); }, &meet);
  StreamConfig tx;
  tx.op = Op::Send;
  tx.size = 1024;
  tx.iterations = 100;
  tx.depth = 8;
  tx.ready = meet.ready();
  StreamResult a = stream1(tb["s1"], nullptr, tx);
  tx.ready = nullptr;
  StreamResult b = stream1(tb["s2"], nullptr, tx);
  CHECK(t.join() == "");
  CHECK(a.tx.ops + b.tx.ops == 200);
  CHECK(rr.rx.ops == 200);
  CHECK(rr.rx.bytes == 200ull * 1024);
}

TEST_CASE("receive pool: after a flush its slots are free again, so a later fill posts") {
  Pair p;
  RecvPool pool;
  pool.layout(p.b(), p.b().local_mrs["mb"], 0, 4096, 8);
  pool.fill(p.b(), 8);
  REQUIRE(pool.outstanding() == 8);
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_ERR;
  REQUIRE(ibv_modify_qp(p.b().qp, &a, IBV_QP_STATE) == 0);  // flushes the 8 receives
  pool.forget_outstanding();
  CHECK(pool.outstanding() == 0);
  pool.fill(p.b(), 8);  // the QP is in ERR: posted and flushed again, but posted
  CHECK(pool.outstanding() == 8);
}

TEST_CASE("an expected completion status ends the stream and is returned, not thrown") {
  Pair p;
  p.a().remote_mrs["mb"].rkey ^= 0x5a5a00;
  StreamConfig c;
  c.op = Op::Write;
  c.size = 64;
  c.iterations = 10;
  c.depth = 1;
  c.local_mr = "ma";
  c.remote_mr = "mb";
  c.expect_status = IBV_WC_REM_ACCESS_ERR;
  StreamResult r = stream1(p.a(), nullptr, c);
  REQUIRE(r.expected.has_value());
  CHECK(r.expected->status == IBV_WC_REM_ACCESS_ERR);
  CHECK(r.expected->op == 1);  // the first write already fails
  CHECK(r.tx.ops == 0);
}

TEST_CASE("an expected status that does not come: the stream completes and says nothing was expected") {
  Pair p;
  StreamConfig c;
  c.op = Op::Write;
  c.size = 64;
  c.iterations = 10;
  c.local_mr = "ma";
  c.remote_mr = "mb";
  c.expect_status = IBV_WC_REM_ACCESS_ERR;
  StreamResult r = stream1(p.a(), nullptr, c);
  CHECK_FALSE(r.expected.has_value());
  CHECK(r.tx.ops == 10);
}

TEST_CASE("keep_latency: one post-to-completion time per WR") {
  Pair p;
  StreamConfig c;
  c.op = Op::Write;
  c.size = 4096;
  c.iterations = 50;
  c.depth = 8;
  c.local_mr = "ma";
  c.remote_mr = "mb";
  c.keep_latency = true;
  StreamResult r = stream1(p.a(), nullptr, c);
  REQUIRE(r.latency_us.size() == 50);
  CHECK(std::all_of(r.latency_us.begin(), r.latency_us.end(), [](double us) { return us > 0; }));
  c.signal_every = 2;
  CHECK_THROWS_WITH_AS(stream1(p.a(), nullptr, c), doctest::Contains("per-WR latency needs every WR signaled"),
                       DataplaneError);
}

TEST_CASE("per-WR hook sets atomic operands: compare-and-swap counts 0 -> 1 -> ... -> n in order") {
  Pair p;
  std::memset(p.b().local_mrs["mb"].data, 0, 8);
  StreamConfig c;
  c.op = Op::CmpSwap;
  c.size = 8;
  c.iterations = 100;
  c.depth = 1;
  c.local_mr = "ma";
  c.remote_mr = "mb";
  c.hook = [](uint64_t i, WrEdit& e) {
    e.compare_add = i;
    e.swap = i + 1;
    return true;
  };
  CHECK(stream1(p.a(), nullptr, c).tx.ops == 100);
  uint64_t v;
  std::memcpy(&v, p.b().local_mrs["mb"].data, 8);
  CHECK(v == 100);  // every swap found the value the previous one left
}

TEST_CASE("a receive stream with keep_posted off takes what is posted and posts nothing") {
  Pair p;
  RecvPool pool;
  pool.layout(p.b(), p.b().local_mrs["mb"], 0, 256, 8);
  pool.fill(p.b(), 3);  // what an earlier owner of the queue left posted
  StreamConfig tx;
  tx.op = Op::Send;
  tx.size = 0;  // empty messages are fine for a SEND
  tx.iterations = 3;
  tx.depth = 1;
  tx.local_mr = "ma";
  CHECK(stream1(p.a(), nullptr, tx).tx.ops == 3);
  StreamConfig rx;
  rx.op = Op::Recv;
  rx.size = 1;
  rx.iterations = 3;
  rx.rx_depth = 3;
  rx.recv_mr = "mb";
  rx.recv_slot_size = 256;
  rx.recv_slots = 8;  // the layout already in the pool: its receives count
  rx.keep_posted = false;
  StreamResult r = stream1(p.b(), &pool, rx);
  CHECK(r.rx.ops == 3);
  CHECK(pool.outstanding() == 0);
  CHECK(pool.outstanding_in(p.b().local_mrs["mb"].data) == 0);
}

TEST_CASE("on_receive sees every receive's payload past the GRH, for checks one seed cannot make") {
  Pair p("UD");
  fill_pattern(p.a().local_mrs["ma"].data, 512, 21);
  RecvPool pool;
  StreamConfig rx;
  rx.op = Op::Recv;
  rx.size = 512;
  rx.iterations = 20;
  rx.depth = 32;
  rx.local_mr = "mb";
  uint64_t seen = 0, intact = 0;
  rx.on_receive = [&](const ibv_wc& wc, const uint8_t* data, uint32_t len) {
    ++seen;
    if (data && len == 512 && wc.src_qp == p.a().qp->qp_num && check_pattern(data, len, 21) == -1) ++intact;
  };
  Rendezvous meet;  // UD: the receives are posted before the first send
  rx.ready = meet.ready();
  StreamResult rr;
  WorkerThread t([&] { rr = stream1(p.b(), &pool, rx); }, &meet);
  StreamConfig tx;
  tx.op = Op::Send;
  tx.size = 512;
  tx.iterations = 20;
  tx.depth = 1;
  tx.local_mr = "ma";
  tx.ready = meet.ready();
  stream1(p.a(), nullptr, tx);
  CHECK(t.join() == "");
  CHECK(seen == 20);
  CHECK(intact == 20);
}

TEST_CASE("the router gives a QP's pool receives to one owner and its sends to another, on one CQ") {
  Pair p("RC", /*shared_cq=*/true);
  CqRouter router;
  router.assign(p.a().send_cq, p.a().qp->qp_num, 0);      // a sends (owner 0) ...
  router.assign_receives(p.a().recv_cq, p.a().qp->qp_num, 1);  // ... and receives (owner 1)
  router.assign(p.b().send_cq, p.b().qp->qp_num, 2);
  REQUIRE(router.shared(p.a().send_cq) != nullptr);
  fill_pattern(p.a().local_mrs["ma"].data, 128, 5);
  fill_pattern(p.b().local_mrs["mb"].data, 128, 6);
  RecvPool pool_a, pool_b;
  pool_b.layout(p.b(), p.b().local_mrs["mb"], 4096, 128, 16);
  pool_b.fill(p.b(), 16);  // b's receives, for a's sends
  StreamConfig rx;
  rx.op = Op::Recv;
  rx.size = 128;
  rx.iterations = 40;
  rx.depth = 16;
  rx.local_mr = "ma";
  rx.recv_offset = 4096;
  rx.check_seed = 6;
  Rendezvous meet;  // a's receives posted before b sends to them
  rx.ready = meet.ready();
  StreamResult rr;
  WorkerThread receiver([&] { rr = stream1(p.a(), &pool_a, rx, {&router, 1}); }, &meet);
  StreamConfig tx;
  tx.op = Op::Send;
  tx.size = 128;
  tx.iterations = 16;
  tx.depth = 1;
  tx.local_mr = "ma";
  tx.ready = meet.ready();
  StreamResult ta = stream1(p.a(), nullptr, tx, {&router, 0});  // a -> b while a also receives
  tx.ready = nullptr;
  tx.local_mr = "mb";
  tx.iterations = 40;
  StreamResult tb = stream1(p.b(), nullptr, tx, {&router, 2});  // b -> a: a's receive thread checks them
  CHECK(receiver.join() == "");
  CHECK(ta.tx.ops == 16);
  CHECK(tb.tx.ops == 40);
  CHECK(rr.rx_checked == 40);
}

TEST_CASE("a shared CQ whose receives go back to the sender's owner routes them there (one owner left)") {
  // qpo's external ping-pong reads a QP's sends and receives on one thread: the executor had
  // given them two owners (so the CQ is shared), then hands the receives to the sends' owner.
  Pair p;  // a alone on CQ ca
  CqRouter router;
  uint32_t a = p.a().qp->qp_num;
  router.assign(p.a().send_cq, a, 0);
  router.assign_receives(p.a().recv_cq, a, 1);
  REQUIRE(router.shared(p.a().recv_cq) != nullptr);
  router.assign_receives(p.a().recv_cq, a, 0);  // one owner now: 0 takes everything
  fill_pattern(p.b().local_mrs["mb"].data, 128, 9);
  RecvPool pool_a;
  StreamConfig rx;
  rx.op = Op::Recv;
  rx.size = 128;
  rx.iterations = 8;
  rx.depth = 8;
  rx.local_mr = "ma";
  rx.recv_offset = 4096;
  rx.check_seed = 9;
  Rendezvous meet;  // a's receives posted before b sends to them
  rx.ready = meet.ready();
  StreamResult rr;
  WorkerThread receiver([&] { rr = stream1(p.a(), &pool_a, rx, {&router, 0}); }, &meet);
  StreamConfig tx;
  tx.op = Op::Send;
  tx.size = 128;
  tx.iterations = 8;
  tx.depth = 1;
  tx.local_mr = "mb";
  tx.ready = meet.ready();
  StreamResult tb = stream1(p.b(), nullptr, tx);
  CHECK(receiver.join() == "");  // before the fix: owner 1's queue took them, and this timed out
  CHECK(tb.tx.ops == 8);
  CHECK(rr.rx_checked == 8);
}

TEST_CASE("an expected status with 16 WRs in flight: the flushed ones behind it end nothing") {
  Pair p;
  p.a().remote_mrs["mb"].rkey ^= 0x5a5a00;
  StreamConfig c;
  c.op = Op::Write;
  c.size = 64;
  c.iterations = 100;
  c.depth = 16;
  c.local_mr = "ma";
  c.remote_mr = "mb";
  c.expect_status = IBV_WC_REM_ACCESS_ERR;
  StreamResult r = stream1(p.a(), nullptr, c);  // IBV_WC_WR_FLUSH_ERR for the other 15 must not throw
  REQUIRE(r.expected.has_value());
  CHECK(r.expected->status == IBV_WC_REM_ACCESS_ERR);
}

TEST_CASE("receive pool: going back to an earlier layout reuses its free slots, never a slot still posted") {
  Pair p;
  RecvPool pool;
  const LocalMr& mb = p.b().local_mrs["mb"];
  pool.layout(p.b(), mb, 0, 256, 4);
  pool.fill(p.b(), 4);  // slots 0..3 of the first layout, all posted
  pool.layout(p.b(), mb, 65536, 512, 4);  // a second layout (another owner's)
  pool.layout(p.b(), mb, 0, 256, 4);      // back to the first: it has no free slot
  pool.fill(p.b(), 8);
  CHECK(pool.outstanding() == 4);  // nothing more could be posted without doubling a slot
  CHECK(pool.outstanding_in(mb.data) == 4);
}

// Ping-pong on the device's clock (PingPongConfig::device_clock). rxe stamps no completions: its
// extended CQs take no IBV_WC_EX_WITH_COMPLETION_TIMESTAMP and have no timestamp reader. So the
// test gives a's extended CQ the one reader a stamping device has, a clock that advances 1000
// ticks per completion read; everything else (ibv_start_poll/ibv_end_poll on rxe's CQ, sends
// and receives sorted, data checked, the interval arithmetic) is the real path.
namespace {
uint64_t g_device_ticks = 0;
uint64_t stepping_clock(ibv_cq_ex*) { return g_device_ticks += 1000; }

PingPongConfig clocked(Op op, bool initiator, const char* local, const char* remote) {
  PingPongConfig c;
  c.op = op;
  c.initiator = initiator;
  c.size = 64;
  c.iterations = 100;
  c.local_mr = local;
  c.remote_mr = remote;
  c.local_offset = op == Op::Read ? 0 : 4096;
  c.check_seed = 5;
  c.device_clock = true;  // the target ignores it: only the initiator times
  return c;
}
}  // namespace

TEST_CASE("ping-pong on the device's clock: each iteration is the time between two completion stamps") {
  for (Op op : {Op::Send, Op::Write, Op::Read}) {
    CAPTURE(op_name(op));
    Pair p("RC", false, false, true);
    ibv_cq_ex* cq = p.tb.extended_cq("ca");
    REQUIRE(cq);
    cq->read_completion_ts = stepping_clock;
    p.a().send_clock = {cq, 1000000, ~uint64_t{0}};  // 1 GHz: 1000 ticks are 1 usec
    fill_pattern(p.a().local_mrs["ma"].data + 4096, 64, 5);
    fill_pattern(p.b().local_mrs["mb"].data + 4096, 64, 5);
    if (op == Op::Read) fill_pattern(p.b().local_mrs["mb"].data, 64, 5);
    RecvPool pa, pb;
    auto [ri, rt] = run_pingpong_pair({&p.a(), &pa}, clocked(op, true, "ma", "mb"), {&p.b(), &pb},
                                      clocked(op, false, "mb", "ma"));
    CHECK(ri.device_clock);
    CHECK(ri.iterations == 100);
    CHECK(ri.lat.samples == 99);  // 100 stamps, 99 intervals
    // One stamp per iteration (the initiator's own WR; receives are not stamped): every
    // interval is 1000 ticks, half of it for send and write (RTT/2).
    double want = op == Op::Read ? 1.0 : 0.5;
    CHECK(ri.lat.t_min == doctest::Approx(want));
    CHECK(ri.lat.t_max == doctest::Approx(want));
    CHECK((op == Op::Send ? ri.checked == 100 : ri.checked == 1));
    CHECK_FALSE(rt.device_clock);
  }
}

TEST_CASE("ping-pong on the device's clock without a timestamped send CQ fails before any traffic") {
  Pair p;
  RecvPool pa;
  PingPongConfig c = clocked(Op::Read, true, "ma", "mb");
  CHECK_THROWS_WITH_AS(run_pingpong({&p.a(), &pa}, c),
                       doctest::Contains("clock = \"device\" needs a send CQ created with `timestamps: true`"),
                       DataplaneError);
}

TEST_CASE("ping-pong on the device's clock: a failed completion read through ibv_start_poll names its status") {
  Pair p("RC", false, false, true);
  ibv_cq_ex* cq = p.tb.extended_cq("ca");
  cq->read_completion_ts = stepping_clock;
  p.a().send_clock = {cq, 1000000, ~uint64_t{0}};
  p.a().remote_mrs["mb"].rkey ^= 0x5a5a00;  // a wrong rkey: the read completes with REM_ACCESS_ERR
  RecvPool pa;
  PingPongConfig c = clocked(Op::Read, true, "ma", "mb");
  c.check_seed.reset();
  CHECK_THROWS_WITH_AS(run_pingpong({&p.a(), &pa}, c), doctest::Contains("IBV_WC_REM_ACCESS_ERR"), DataplaneError);
}

TEST_CASE("a rate-limited stream never runs faster than its rate (1000 WRs/s, bursts of 4)") {
  Pair p;
  fill_pattern(p.a().local_mrs["ma"].data, 4096, 17);
  StreamConfig c;
  c.op = Op::Write;
  c.size = 4096;
  c.iterations = 200;
  c.local_mr = "ma";
  c.remote_mr = "mb";
  c.rate = 1000;
  c.burst = 4;
  StreamResult r = stream1(p.a(), nullptr, c);
  CHECK(r.tx.ops == 200);
  // The first 4 go at once, the other 196 one per millisecond at the most: the run takes at
  // least 196 ms from the first post, however fast the device is (a load only adds to it).
  CHECK(r.tx.seconds >= 0.195);
  CHECK(r.tx.msg_rate <= 200 / 0.195 / 1e6);
  CHECK(check_pattern(p.b().local_mrs["mb"].data, 4096, 17) == -1);
}

TEST_CASE("a burst smaller than the post list is refused before posting") {
  Pair p;
  StreamConfig c;
  c.op = Op::Write;
  c.size = 64;
  c.iterations = 8;
  c.post_list = 4;
  c.rate = 100;
  c.burst = 2;
  c.local_mr = "ma";
  c.remote_mr = "mb";
  CHECK_THROWS_WITH_AS(stream1(p.a(), nullptr, c), doctest::Contains("burst 2 is smaller than post_list 4"), DataplaneError);
}

TEST_CASE("a rate-limited stream on two QPs shares the tokens between them round robin") {
  Testbed tb;
  tb.add_mr("ma", kMr);
  tb.add_mr("mb", kMr);
  for (const char* cq : {"c1", "c2", "c3", "c4"}) tb.add_cq(cq, 1024);
  tb.add_qp("a1", {"RC", "c1", "c1"});
  tb.add_qp("b1", {"RC", "c2", "c2"});
  tb.add_qp("a2", {"RC", "c3", "c3"});
  tb.add_qp("b2", {"RC", "c4", "c4"});
  tb.connect("a1", "b1");
  tb.connect("a2", "b2");
  StreamConfig c;
  c.op = Op::Write;
  c.size = 64;
  c.duration = 0.3;
  c.local_mr = "ma";
  c.remote_mr = "mb";
  c.rate = 2000;  // ~600 WRs in 0.3 s, between two QPs
  StreamLane lanes[] = {{&tb["a1"], nullptr}, {&tb["a2"], nullptr}};
  StreamResult r = run_stream(lanes, c);
  REQUIRE(r.lanes.size() == 2);
  CAPTURE(r.lanes[0].ops);
  CAPTURE(r.lanes[1].ops);
  // Before round robin the first QP took every token and the second posted nothing. A lane is
  // skipped only while its queue is full, so each gets at least a third of the total.
  uint64_t total = r.lanes[0].ops + r.lanes[1].ops;
  CHECK(total > 0);
  CHECK(r.lanes[0].ops * 3 >= total);
  CHECK(r.lanes[1].ops * 3 >= total);
}

TEST_CASE("a rate limit with events = true is refused: a paced stream wakes at its rate") {
  Pair p("RC", false, true);
  StreamConfig c;
  c.op = Op::Write;
  c.size = 64;
  c.iterations = 8;
  c.rate = 100;
  c.events = true;
  c.local_mr = "ma";
  c.remote_mr = "mb";
  CHECK_THROWS_WITH_AS(stream1(p.a(), nullptr, c), doctest::Contains("a rate limit and events = true do not go together"),
                       DataplaneError);
}

TEST_CASE("a receiver told its sender's pace waits out twice a burst's gap before timing out") {
  Pair p;
  RecvPool pool;
  StreamConfig c;
  c.op = Op::Recv;
  c.size = 64;
  c.iterations = 4;
  c.local_mr = "mb";
  c.timeout_ms = 100;
  c.rate = 2;   // the sender posts 2 WRs per second,
  c.burst = 1;  // one at a time: 500 ms between them, so the wait is 1000 ms, not 100
  CHECK_THROWS_WITH_AS(stream1(p.b(), &pool, c), doctest::Contains("no completion for 1000 ms"), DataplaneError);
}
