#include "exec/external_perftest.h"

#include <chrono>
#include <cstdio>
#include <stdexcept>

#include "exec/endpoints.h"
#include "exec/external_pingpong.h"
#include "exec/workload_results.h"
#include "util/strings.h"

namespace qpo::exec {

namespace {

interop::Deadline in_ms(int ms) { return std::chrono::steady_clock::now() + std::chrono::milliseconds(ms); }

// perftest's columns; a receiver measures no peak (0: left out).
std::string figures(double peak, double avg, double rate) {
  char buf[160];
  if (peak > 0) std::snprintf(buf, sizeof buf, "BW peak %.2f MB/s, BW average %.2f MB/s, %.6f Mpps", peak, avg, rate);
  else std::snprintf(buf, sizeof buf, "BW average %.2f MB/s, %.6f Mpps", avg, rate);
  return buf;
}

}  // namespace

ExternalPerftest::ExternalPerftest(RunState& st, const RunOptions& o, const plan::Step& step, const std::atomic<bool>* halt)
    : step_(step), run_(st.plan->workload_of(step)) {
  const auto& w = run_.params;
  peer_ = st.plan->external_of(run_.external_peer);
  auto* found = st.qps.find(run_.qp);
  if (!peer_ || !found || !found->qp || !found->slots) {
    error = "QP '" + w.qp + "' was not brought up";
    return;
  }
  for (size_t i = 0; i < st.plan->externals.size() && st.externals; ++i)  // few: no index
    if (&st.plan->externals[i] == peer_) talk_ = st.externals->take_perftest(static_cast<int>(i));
  if (!talk_) {
    error = "no perftest conversation with external '" + peer_->name + "' to go on with";
    return;
  }
  q_ = found;
  talk_->talk.set_stop(halt);
  wait_ms_ = o.phase_timeout_ms;
  bool client = peer_->qpo_initiates();
  bool send = w.op == util::Op::Send;
  streams_ = client || send;
  cfg_.size = static_cast<uint32_t>(w.size);
  cfg_.iterations = w.iterations;
  cfg_.timeout_ms = o.timeout_ms;
  cfg_.stop = halt;
  cfg_.local_mr = slot_mr_name(*q_);  // what the tool's keys advertised is qpo's slot buffer
  ep_ = own_endpoint(st, *q_, peer_->peer_id);
  if (peer_->write_latency()) {  // ib_write_lat: each side writes into the other's buffer
    streams_ = true;
    pp_.op = dataplane::Op::Write;
    pp_.initiator = peer_->qpo_writes_first();  // the tool's server writes first
    pp_.size = cfg_.size;
    pp_.iterations = w.iterations;
    pp_.inline_size = q_->facts->cap.max_inline_data;
    pp_.local_mr = slot_mr_name(*q_);
    pp_.local_offset = uint64_t{q_->slot_count - 1} * q_->slot_size;  // qpo writes from its last slot
    pp_.recv_offset = 0;            // the tool writes where qpo's keys pointed: the slots' start
    pp_.remote_mr = peer_->name;    // the tool's buffer, from its keys
    pp_.perftest_counter = true;    // its (char)++n, through 0
    pp_.timeout_ms = o.timeout_ms;
    pp_.keep_times = pp_.initiator;
    pp_.stop = halt;
    access_ = access_for(st, *q_, Reader::Sends);
  } else if (peer_->latency) {  // ib_send_lat: both sides send and receive, on bring-up's receives
    streams_ = true;
    pp_ = slot_pingpong(*q_, client, cfg_.size, w.iterations, o.timeout_ms, halt);
    // One thread sends and receives: the QP's receives come to its send-side reader for now.
    access_ = access_for(st, *q_, Reader::Sends);
    if (q_->recv_cq) st.router.assign_receives(q_->recv_cq, ep_.qp->qp_num, access_.owner);
  } else if (client) {
    executor_stream(cfg_);
    cfg_.peak = true;  // the tool prints the BW peak qpo sends it
    cfg_.op = w.op == util::Op::Read ? dataplane::Op::Read : send ? dataplane::Op::Send : dataplane::Op::Write;
    if (!send) cfg_.remote_mr = peer_->name;  // the tool's buffer, from its keys
    cfg_.depth = std::min<uint32_t>(128, std::max<uint32_t>(1, q_->facts->cap.max_send_wr));  // perftest's -t
    access_ = access_for(st, *q_, Reader::Sends);
  } else if (send) {
    use_executor_receives(*q_, cfg_);  // the slots bring-up posted, re-posted as they fill
    cfg_.op = dataplane::Op::Recv;
    cfg_.rx_iterations = w.iterations;
    access_ = access_for(st, *q_, Reader::Receives);
  }
}

void ExternalPerftest::keys() {
  std::string why;
  if (!talk_->talk.keys(talk_->mine, in_ms(wait_ms_), &why)) throw std::runtime_error(why);
}

void ExternalPerftest::run() {
  if (!q_) return;
  try {
    converse();
  } catch (...) {
    halted_ = cfg_.stop && cfg_.stop->load();  // another side failed, or Ctrl-C: not this side's error
    throw;
  }
}

void ExternalPerftest::keys_after_cm() {
  const auto& w = run_.params;
  std::string why;
  std::optional<interop::PerftestKeys> theirs;
  for (int i = 0; i < peer_->keys_after_cm(); ++i)
    if (!(theirs = talk_->talk.keys(talk_->mine, in_ms(wait_ms_), &why))) throw std::runtime_error(why);
  // The first was a sync (the tool's keys still zero); the others carry its QP and buffer.
  if (peer_->qpo_initiates() && w.op == util::Op::Read && !peer_->latency && peer_->max_rd_atomic > theirs->out_reads)
    throw std::runtime_error("the tool accepts " + std::to_string(theirs->out_reads) + " RDMA READs at once (its out_reads), QP " +
                             peer_->qp + "'s max_rd_atomic is " + std::to_string(peer_->max_rd_atomic) +
                             ": run the tool with -o " + std::to_string(peer_->max_rd_atomic));
  ep_.remote_mrs.add(peer_->name, dataplane::RemoteMr{theirs->vaddr, theirs->rkey, w.size});
  tool_keys_ = interop::describe(*theirs);
}

void ExternalPerftest::converse() {
  auto& talk = talk_->talk;
  bool client = peer_->qpo_initiates(), send = run_.params.op == util::Op::Send;
  dataplane::StreamLane lane{&ep_, ep_.recv_pool.get()};
  std::string why;
  if (peer_->test_over_cm) {
    stage_ = "the hand-shakes after the rdma_cm connection";
    keys_after_cm();
  }
  if (peer_->write_latency()) {
    // ib_write_lat: no hand-shake before the test and none after it: the tool prints its
    // figures and exits, closing the connection.
    stage_ = "the ping-pong of RDMA WRITEs";
    pp_result_ = dataplane::run_pingpong(lane, pp_, access_);
    stage_ = "";
    return;
  }
  if (peer_->latency) {
    stage_ = "the hand-shake before the ping-pong";  // both sides' receives are posted
    keys();
    stage_ = "the ping-pong";
    pp_result_ = dataplane::run_pingpong(lane, pp_, access_);
  } else if (send) {
    // ib_send_bw: the server posts its receives, then one more keys hand-shake tells the
    // client it may send.
    if (client) {
      stage_ = "the hand-shake before the SENDs";
      keys();
      stage_ = "the SENDs";
      result_ = dataplane::run_stream({&lane, 1}, cfg_, access_);
    } else {
      stage_ = "the hand-shake before the SENDs";
      cfg_.ready = [this] {
        keys();
        stage_ = "the tool's SENDs";
      };
      result_ = dataplane::run_stream({&lane, 1}, cfg_, access_);
    }
  } else if (client) {
    stage_ = "the test";
    result_ = dataplane::run_stream({&lane, 1}, cfg_, access_);
    stage_ = "the hand-shake after the test";
    keys();
    stage_ = "the report";
    const auto& tx = result_.tx;
    interop::PerftestReport mine{cfg_.size, tx.ops, tx.bw_peak, tx.bw_avg, tx.msg_rate};
    if (!talk.reports(mine, in_ms(wait_ms_), &why)) throw std::runtime_error(why);
  } else {
    // The tool's client runs its test now; it comes back to the hand-shake when it is done.
    stage_ = "the tool's test";
    keys();
    stage_ = "the report";
    tool_report_ = talk.reports(interop::PerftestReport{}, in_ms(wait_ms_), &why);
    if (!tool_report_) throw std::runtime_error(why);
  }
  stage_ = "the close";
  if (!talk.close(talk_->mine, in_ms(wait_ms_), &why)) throw std::runtime_error(why);
  stage_ = "";
}

bool ExternalPerftest::finish(RunState& st, report::RunReport& log) {
  const auto& w = run_.params;
  bool client = peer_ && peer_->qpo_initiates();
  report::StepResult r;
  r.host = st.host;
  r.phase = "traffic";
  r.verb = "workload";
  r.object = w.qp;
  r.plan_step = step_.index;
  std::string tool = peer_ ? peer_->tool() : "perftest";
  r.detail = w.name + ": " + tool + (client ? " server" : " client") + ", IBV_WR_" + util::to_upper(w.op_spelling()) +
             " x" + std::to_string(w.iterations) + ", " + std::to_string(w.size) + " B";
  std::string why = error;
  if (!why.empty() && !stage_.empty()) why += " (during " + stage_ + ")";
  if (peer_ && peer_->latency && q_ && q_->recv_cq)  // its receives go back to their own reader
    st.router.assign_receives(q_->recv_cq, ep_.qp->qp_num, access_for(st, *q_, Reader::Receives).owner);
  uint64_t done = peer_ && peer_->latency ? pp_result_.iterations
                  : streams_              ? (client ? result_.tx.ops : result_.rx.ops)
                                          : (tool_report_ ? tool_report_->iterations : 0);
  if (why.empty() && streams_ && done < w.iterations)
    why = "stopped after " + std::to_string(done) + " of " + std::to_string(w.iterations) + " messages";
  if (!why.empty()) {
    r.status = report::StepStatus::Failed;
    r.message = why;
    bool halted = (error.empty() || halted_) && cfg_.stop && cfg_.stop->load();
    if (!halted) log.fail("workload '" + w.name + "' with external '" + (peer_ ? peer_->name : "") + "': " + why);
    log.add(std::move(r));
    return false;
  }
  auto result = std::make_shared<report::WorkloadResult>();
  result->name = w.name;
  if (peer_->latency) {
    const auto& res = pp_result_;
    auto times = res.times_us;
    result->summary = op_summary(w.size, res.iterations, res.seconds, times);
    r.micros = res.seconds * 1e6;
    char buf[200];
    bool timed = peer_->write_latency() ? pp_.initiator : client;  // the side that opens each round trip times it
    if (timed)
      std::snprintf(buf, sizeof buf, "%llu round trips: t_typical %.2f usec, t_min %.2f, t_max %.2f, p99 %.2f (half a round trip, as the tool reports)",
                    static_cast<unsigned long long>(res.iterations), res.lat.t_typical, res.lat.t_min, res.lat.t_max, res.lat.p99);
    else
      std::snprintf(buf, sizeof buf, "answered %llu %s in %.3f s", static_cast<unsigned long long>(res.iterations),
                    peer_->write_latency() ? "RDMA WRITEs" : "SENDs", res.seconds);
    r.message = buf;
  } else if (streams_) {
    const auto& bw = client ? result_.tx : result_.rx;
    std::vector<double> none;
    result->summary = op_summary(w.size, bw.ops, bw.seconds, none, bw.bw_peak);
    r.micros = bw.seconds * 1e6;
    r.message = (client ? "" : "received: ") + figures(bw.bw_peak, bw.bw_avg, bw.msg_rate) +
                (client && !(w.op == util::Op::Send) ? " (sent to the tool, which prints them)" : "");
  } else {
    const auto& t = *tool_report_;
    result->summary = {{"size", static_cast<int64_t>(t.size)}, {"iterations", static_cast<int64_t>(t.iterations)},
                       {"bw_peak", t.bw_peak}, {"bw_avg", t.bw_avg}, {"msg_rate", t.msg_rate},
                       {"measured_by", tool + " (its client)"}};
    r.message = "the tool measured " + std::to_string(t.iterations) + " x " + std::to_string(t.size) + " B: " +
                figures(t.bw_peak, t.bw_avg, t.msg_rate);
  }
  if (!tool_keys_.empty()) r.message += "; the tool's keys after the CM connection: " + tool_keys_;
  r.workload = std::move(result);
  log.add(std::move(r));
  return true;
}

}  // namespace qpo::exec
