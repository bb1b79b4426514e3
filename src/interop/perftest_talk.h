#pragma once
// One perftest conversation over its TCP connection, or its RDMA one with -R (perftest_pipe.h;
// perftest_message.h has the units): qpo
// plays either side of ib_write_bw, ib_read_bw or ib_send_bw. Every exchange is symmetric: the
// client writes its unit first and then reads the server's; the server reads, then writes.
// What each tool does between the units (its QP to RTR, its receives, its data phase) is the
// caller's: exec/external_exchange.cpp and exec/external_perftest.cpp.
#include <array>
#include <atomic>
#include <optional>
#include <string>

#include <memory>

#include "interop/perftest_message.h"
#include "interop/perftest_pipe.h"

namespace qpo::interop {

// What the opening units told qpo about the tool.
struct PerftestOpening {
  std::string version;   // "6.06"
  uint32_t cycle_buffer = 0, cache_line = 0;
  std::optional<int> mtu;  // the tool's ibv_mtu enum (nullopt: it sent none qpo knows)
};

class PerftestTalk {
 public:
  // `client`: qpo dialled the tool (the tool serves); false: the tool dialled qpo.
  PerftestTalk(std::unique_ptr<PerftestPipe> pipe, bool client) : pipe_(std::move(pipe)), client_(client) {}

  // Versions, cycle buffer, cache line, MTU (qpo's ibv_mtu enum), in the tool's order.
  std::optional<PerftestOpening> opening(int mtu_enum, Deadline deadline, std::string* why);
  // One keys hand-shake: qpo's keys out, the tool's back.
  std::optional<PerftestKeys> keys(const PerftestKeys& mine, Deadline deadline, std::string* why);
  // A server's hand-shake in two halves, for a server that must do something between reading
  // the tool's keys and answering (perftest -R: listen for the tool's test QP, which connects
  // as soon as the answer comes). keys() is the two in a row.
  std::optional<PerftestKeys> read_keys(Deadline deadline, std::string* why);
  bool answer_keys(const PerftestKeys& mine, Deadline deadline, std::string* why);
  // The bandwidth report exchange after the client's run (five units).
  std::optional<PerftestReport> reports(const PerftestReport& mine, Deadline deadline, std::string* why);
  // The end (ctx_close_connection): a last keys hand-shake, then over TCP "done" (which nobody reads).
  bool close(const PerftestKeys& mine, Deadline deadline, std::string* why);

  // Reads wait in slices so that this flag (Ctrl-C, another side failed) ends them early.
  void set_stop(const std::atomic<bool>* stop) {
    stop_ = stop;
    pipe_->set_stop(stop);
  }
  const std::string& remote() const { return pipe_->remote(); }
  bool client() const { return client_; }

 private:
  std::optional<PerftestKeys> parse_keys(const std::string& bytes, std::string* why) const;
  // One unit each way, in the role's order; `what` names it in errors ("the tool's keys").
  std::optional<std::string> swap(const std::string& mine, size_t theirs_bytes, Deadline deadline, const char* what,
                                  std::string* why);
  std::unique_ptr<PerftestPipe> pipe_;
  bool client_;
  const std::atomic<bool>* stop_ = nullptr;
};

}  // namespace qpo::interop
