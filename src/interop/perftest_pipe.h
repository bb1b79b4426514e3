#pragma once
// What carries perftest's out-of-band units (perftest_message.h): its TCP socket, or, when the
// tool runs with -R (which turns its -z on too), an RDMA connection of its own through rdma_cm
// (cm/perftest_control.h). The units and their order are the same either way; only the keys
// travel differently (text over TCP, perftest's struct pingpong_dest over RDMA), and the TCP
// conversation ends with a "done" that the RDMA one does not send.
#include <atomic>
#include <optional>
#include <string>
#include <string_view>

#include "interop/tcp_peer.h"

namespace qpo::interop {

class PerftestPipe {
 public:
  virtual ~PerftestPipe() = default;
  // The whole unit, delivered (TCP: written; RDMA: its SEND completed) before the deadline.
  virtual bool send(std::string_view bytes, Deadline deadline, std::string* why) = 0;
  // Exactly `n` bytes, the other side's next unit; nullopt with `why` on a timeout, an error,
  // or once `stop` (when given) is set.
  virtual std::optional<std::string> receive(size_t n, Deadline deadline, std::string* why,
                                             const std::atomic<bool>* stop) = 0;
  virtual const std::string& remote() const = 0;
  // The tool's -R: keys as struct pingpong_dest, no "done".
  virtual bool rdma() const = 0;
  // A flag (Ctrl-C, another side failed) that ends a send's wait early, where a send waits.
  virtual void set_stop(const std::atomic<bool>*) {}
};

class TcpPipe final : public PerftestPipe {
 public:
  explicit TcpPipe(TcpPeer peer) : peer_(std::move(peer)) {}
  bool send(std::string_view bytes, Deadline, std::string* why) override { return peer_.send(bytes, why); }
  std::optional<std::string> receive(size_t n, Deadline deadline, std::string* why, const std::atomic<bool>* stop) override {
    return peer_.receive(n, deadline, why, stop);
  }
  const std::string& remote() const override { return peer_.remote(); }
  bool rdma() const override { return false; }

 private:
  TcpPeer peer_;
};

}  // namespace qpo::interop
