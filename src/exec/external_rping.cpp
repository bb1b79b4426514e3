// rping's side of ExternalPingpong (interop/rping_message.h): each ping is four messages and
// two RDMA operations, each step waiting for the last one, on dataplane::Conversation.
#include <chrono>
#include <cstdio>
#include <cstring>

#include "dataplane/conversation.h"
#include "dataplane/error.h"
#include "exec/endpoints.h"
#include "exec/external_pingpong.h"
#include "interop/rping_message.h"

namespace qpo::exec {

namespace {

using dataplane::DataplaneError;

[[noreturn]] void broken(const std::string& qp, const std::string& what) {
  throw DataplaneError(DataplaneError::Kind::Data, qp, "QP '" + qp + "': " + what);
}

}  // namespace

void ExternalPingpong::run_rping() {
  auto& r = rping_result_;
  const auto& w = run_.params;
  const bool client = cfg_.initiator;  // rping's client sends first
  const auto& buf = dataplane::local_mr(ep_, w.local_mr);
  const auto& slots = dataplane::local_mr(ep_, slot_mr_name(*q_));
  const uint32_t size = static_cast<uint32_t>(w.size);
  // The messages go from the last slot (the executor's send buffer); receives land in the others.
  const uint64_t msg_at = uint64_t{q_->slot_count - 1} * q_->slot_size;
  dataplane::Conversation talk(ep_, access_, cfg_.rx_depth, cfg_.timeout_ms, cfg_.stop);
  auto send_message = [&](const std::vector<uint8_t>& bytes, const std::string& what) {
    std::memcpy(slots.data + msg_at, bytes.data(), bytes.size());
    dataplane::SendRequest s;
    s.op = dataplane::Op::Send;
    s.num_sge = 1;
    s.sge[0] = {&slots, msg_at, static_cast<uint32_t>(bytes.size())};
    talk.post_and_wait(s, what);
  };
  auto info_of = [&](uint64_t offset) {
    return interop::format_rping_info({reinterpret_cast<uint64_t>(buf.data + offset), buf.mr->rkey, size});
  };
  auto receive = [&](const std::string& what) {
    auto m = talk.receive(what);
    if (talk.stopped()) r.halted = true;
    return m;
  };
  auto start = std::chrono::steady_clock::now();
  for (uint64_t ping = 0; ping < w.iterations && !r.halted; ++ping) {
    std::string n = "ping " + std::to_string(ping + 1);
    std::string of_count = " (the tool's -C must be " + std::to_string(w.iterations) + ")";
    if (client) {
      // As rping_test_client: advertise the start buffer, wait for the go-ahead, advertise the
      // sink, wait for the go-ahead, compare.
      std::span<uint8_t> first(buf.data, size), second(buf.data + size, size);
      interop::fill_rping_buffer(first, static_cast<int>(ping));
      std::memset(second.data(), 0, size);
      send_message(info_of(0), "the start buffer's SEND of " + n);
      if (receive("go-ahead from the tool after its RDMA READ of " + n).empty() && r.halted) break;
      send_message(info_of(size), "the sink buffer's SEND of " + n);
      if (receive("go-ahead from the tool after its RDMA WRITE of " + n).empty() && r.halted) break;
      if (std::memcmp(first.data(), second.data(), size) != 0)
        broken(w.qp, n + ": the bytes the tool wrote back differ from the ones it read");
    } else {
      // As rping_test_server: READ the client's start buffer, go-ahead, WRITE it to the sink, go-ahead.
      std::string why;
      auto msg = receive("message from the tool with the start buffer of " + n + of_count);
      if (r.halted) break;
      auto src = interop::parse_rping_info(msg, &why);
      if (!src) broken(w.qp, n + ": the tool's start buffer message is " + why);
      if (src->size != size || src->size > buf.length)
        broken(w.qp, n + ": the tool's buffer is " + std::to_string(src->size) + " bytes, the workload's size " +
                              std::to_string(size) + " (the tool's -S must be the same)");
      dataplane::RemoteMr theirs{src->addr, src->rkey, src->size};
      dataplane::SendRequest rd;
      rd.op = dataplane::Op::Read;
      rd.num_sge = 1;
      rd.sge[0] = {&buf, 0, src->size};
      rd.remote = &theirs;
      talk.post_and_wait(rd, "the RDMA READ of " + n);
      send_message(std::vector<uint8_t>(interop::kRpingInfoBytes, 0), "the go-ahead after the READ of " + n);
      msg = receive("message from the tool with the sink buffer of " + n);
      if (r.halted) break;
      auto sink = interop::parse_rping_info(msg, &why);
      if (!sink) broken(w.qp, n + ": the tool's sink buffer message is " + why);
      // rping's server writes the string it read and its NUL (strlen + 1), at most the sink's size.
      uint32_t len = static_cast<uint32_t>(strnlen(reinterpret_cast<const char*>(buf.data), src->size));
      len = std::min(len + 1, std::min(src->size, sink->size));
      dataplane::RemoteMr there{sink->addr, sink->rkey, sink->size};
      dataplane::SendRequest wr;
      wr.op = dataplane::Op::Write;
      wr.num_sge = 1;
      wr.sge[0] = {&buf, 0, len};
      wr.remote = &there;
      talk.post_and_wait(wr, "the RDMA WRITE of " + n);
      send_message(std::vector<uint8_t>(interop::kRpingInfoBytes, 0), "the go-ahead after the WRITE of " + n);
    }
    ++r.pings;
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

bool ExternalPingpong::finish_rping(report::RunReport& log, report::StepResult line) {
  const auto& w = run_.params;
  const auto& r = rping_result_;
  bool client = cfg_.initiator;
  line.detail = w.name + ": rping x" + std::to_string(w.iterations) + ", " + std::to_string(w.size) + " B through " +
                w.local_mr + " with external '" + run_.external + "' (" + (client ? "its server" : "its client") + ")";
  std::string why = error;
  if (why.empty() && r.pings < w.iterations)
    why = "stopped after " + std::to_string(r.pings) + " of " + std::to_string(w.iterations) + " pings";
  else if (!why.empty())
    why += " (after " + std::to_string(r.pings) + " of " + std::to_string(w.iterations) + " pings)";
  // Halted by another side or Ctrl-C: the run's reason is that.
  if (!why.empty()) return report_failure(log, w.name, std::move(line), why, error.empty() && r.halted);
  char buf[200];
  std::snprintf(buf, sizeof buf, "%llu pings in %.3f s: %s", static_cast<unsigned long long>(r.pings), r.seconds,
                client ? "the tool read each ping's bytes and wrote them back, the same (compared)"
                       : "read each ping's bytes from the tool and wrote them back");
  line.message = buf;
  line.micros = r.seconds * 1e6;
  log.add(std::move(line));
  return true;
}

}  // namespace qpo::exec
