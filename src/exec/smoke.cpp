// The smoke exchange proves "up" means data flows, each host playing only its own role: for
// every connected pair the sender SENDs (and RDMA WRITEs, if the receiver grants remote
// write) a pattern from its slot buffer's last slot; the receiver checks both arrived intact.
// Both run on the data path (dataplane::run_stream), one message each. Senders never wait
// for the receiving process, so pairs split across hosts run in the same order on both.
#include <chrono>
#include <span>
#include <stdexcept>
#include <thread>

#include "dataplane/error.h"
#include "dataplane/pattern.h"
#include "dataplane/stream.h"
#include "exec/async_events.h"
#include "exec/endpoints.h"
#include "exec/steps.h"

namespace qpo::exec {

namespace {

constexpr uint32_t kSmokeBytes = 64;
constexpr uint64_t kWriteSeedOffset = 7;  // the RDMA WRITE's pattern differs from the SEND's

uint64_t send_slot_offset(const QpState& q) { return static_cast<uint64_t>(q.slot_count - 1) * q.slot_size; }

dataplane::StreamConfig one_message(const RunOptions& o) {
  dataplane::StreamConfig c;
  executor_stream(c);
  c.size = kSmokeBytes;
  c.iterations = 1;
  c.depth = 1;
  c.timeout_ms = o.timeout_ms;
  c.stop = &stop_flag();
  return c;
}

// A stream returns early when told to stop: that is not a message sent or received.
void throw_if_interrupted() {
  if (stop_requested()) throw std::runtime_error("interrupted (SIGINT)");
}

void run_one(RunState& st, QpState& q, dataplane::Endpoint& ep, const dataplane::StreamConfig& c) {
  dataplane::StreamLane lane{&ep, ep.recv_pool.get()};
  Reader reader = c.op == dataplane::Op::Recv ? Reader::Receives : Reader::Sends;
  try {
    dataplane::run_stream(std::span(&lane, 1), c, access_for(st, q, reader));
  } catch (const dataplane::DataplaneError& e) {
    if (e.kind() != dataplane::DataplaneError::Kind::Timeout) throw;
    // The device's own account (a CQ overrun, a fatal QP) says more than the silence.
    throw std::runtime_error(std::string("no ") + (c.op == dataplane::Op::Recv ? "receive" : "send") +
                             " completion on '" + q.facts->name + "' within " + std::to_string(c.timeout_ms) + " ms" +
                             describe_async_events(st));
  }
  throw_if_interrupted();
}

void smoke_send(RunState& st, const plan::SmokePair& pair, const RunOptions& o) {
  auto& a = st.qp_here(pair.sender_id);
  auto ep = slots_endpoint(st, a, pair.receiver_id, true);
  uint8_t* buf = a.slots->data() + send_slot_offset(a);
  dataplane::fill_pattern(buf, kSmokeBytes, pair.seed);
  auto c = one_message(o);
  c.op = dataplane::Op::Send;
  c.local_mr = slot_mr_name(a);
  c.local_offset = send_slot_offset(a);
  run_one(st, a, ep, c);
  if (!pair.rdma_write) return;
  // Into the receiver's last slot (its send buffer), which no receive uses.
  const RemoteQp& b = st.dir.qps.at(pair.receiver_id);
  dataplane::fill_pattern(buf, kSmokeBytes, pair.seed + kWriteSeedOffset);
  c.op = dataplane::Op::Write;
  c.remote_mr = "qpo.slots." + pair.receiver;
  c.remote_offset = static_cast<uint64_t>(b.slots_count - 1) * b.slot_size;
  run_one(st, a, ep, c);
}

void smoke_receive(RunState& st, const plan::SmokePair& pair, const RunOptions& o) {
  auto& b = st.qp_here(pair.receiver_id);
  auto ep = slots_endpoint(st, b, plan::kNoObject, false);  // it only receives: no address handle back
  auto c = one_message(o);
  c.op = dataplane::Op::Recv;
  c.check_seed = pair.seed;
  use_executor_receives(b, c);  // the receive taken is re-posted into the same slots
  run_one(st, b, ep, c);
  if (!pair.rdma_write) return;
  // UC completes at the sender before the data lands, and the sender may be another
  // process: poll the target memory until the pattern shows up.
  const uint8_t* at = b.slots->data() + send_slot_offset(b);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(o.timeout_ms);
  while (dataplane::check_pattern(at, kSmokeBytes, pair.seed + kWriteSeedOffset) >= 0) {
    if (std::chrono::steady_clock::now() > deadline)
      throw std::runtime_error("RDMA WRITE data did not arrive intact within " + std::to_string(o.timeout_ms) + " ms");
    throw_if_interrupted();
    std::this_thread::yield();
  }
}

}  // namespace

bool smoke_step(RunState& st, report::RunReport& log, const RunOptions& o, const plan::Step& step) {
  const auto& pair = step.extra().smoke;
  bool send = step.kind == plan::StepKind::SmokeSend;
  std::string detail = std::string(pair.rdma_write ? "SEND + RDMA WRITE " : "SEND ") + pair.sender + " -> " +
                       pair.receiver + ", " + std::to_string(kSmokeBytes) + " B";
  auto& r = run_step(log, st.host, "traffic", step.verb, step.object, detail,
                     [&] { send ? smoke_send(st, pair, o) : smoke_receive(st, pair, o); });
  if (r.status == report::StepStatus::Failed) return false;
  if (!send) r.message = "data checked";
  return true;
}

}  // namespace qpo::exec
