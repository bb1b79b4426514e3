#pragma once
// perftest's out-of-band connection when the tool runs with -R (its parser turns -z on with
// it; perftest_communication.c: rdma_client_connect, rdma_server_connect): an RC connection of
// its own through rdma_cm on the tool's -p, made before the test QPs connect on the same port.
// One QP with one receive posted at a time (the tool's rx_depth is 1); each unit is one
// signalled SEND. The tool connects with rnr_retry_count 7, so a unit sent before its next
// receive is posted waits instead of failing; qpo's QP does the same. The server's listener is
// destroyed once it has accepted (as the tool's is), leaving the port to the test QPs'.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cm/cm.h"
#include "interop/perftest_pipe.h"
#include "verbs/resources.h"

namespace qpo::cm {

class PerftestControl final : public interop::PerftestPipe {
 public:
  // Connects to the tool's server at ip:port, again every 200 ms while nothing listens there
  // (REJECTED) until the deadline; nullptr with `why` then, or on any other failure.
  static std::unique_ptr<PerftestControl> dial(const std::string& ip, uint16_t port, interop::Deadline deadline,
                                               std::string* why);
  ~PerftestControl() override;
  PerftestControl(const PerftestControl&) = delete;
  PerftestControl& operator=(const PerftestControl&) = delete;

  bool send(std::string_view bytes, interop::Deadline deadline, std::string* why) override;
  std::optional<std::string> receive(size_t n, interop::Deadline deadline, std::string* why,
                                     const std::atomic<bool>* stop) override;
  const std::string& remote() const override { return remote_; }
  bool rdma() const override { return true; }
  // A send waits for the tool's receive without end (rnr_retry 7): this flag ends it early.
  void set_stop(const std::atomic<bool>* stop) override { stop_ = stop; }

 private:
  friend class PerftestControlListener;
  PerftestControl(std::unique_ptr<EventChannel> channel, Id id, std::string remote)
      : channel_(std::move(channel)), id_(std::move(id)), remote_(std::move(remote)) {}
  // PD, CQs, buffer and QP on the id's device, and the first receive; throws VerbsError.
  void make_qp();
  // Waits for `want` on the connection's channel; false with `why` on another event (its type
  // into `got`) or none.
  bool wait_for(rdma_cm_event_type want, interop::Deadline deadline, std::string* why,
                std::optional<rdma_cm_event_type>* got = nullptr);
  // One completion from `cq` before the deadline or the stop: 1; 0 when none came (timed out,
  // stopped); -1 on a polling error or when the tool closed the connection (with `why`).
  int wait_completion(ibv_cq* cq, ibv_wc* wc, interop::Deadline deadline, const std::atomic<bool>* stop, std::string* why);
  // Whether the tool's side went away (its DREQ, the device): read from the CM channel.
  bool closed(std::string* why);
  std::unique_ptr<EventChannel> channel_;  // declared first: destroyed after the id
  Id id_;
  std::string remote_;
  std::unique_ptr<verbs::Pd> pd_;
  std::unique_ptr<verbs::Cq> send_cq_, recv_cq_;
  std::unique_ptr<verbs::Mr> buf_;  // [0, 64): the receive; [64, 128): the send
  bool qp_ = false;                 // rdma_create_qp made the id's QP (rdma_destroy_qp first)
  const std::atomic<bool>* stop_ = nullptr;
};

// The listener for a tool's client (qpo serves): opened when the run starts, so a tool that
// connects early is not refused (its rdma_client_connect does not retry).
class PerftestControlListener {
 public:
  static std::unique_ptr<PerftestControlListener> open(uint16_t port, std::string* why);
  // The first connect request before the deadline, accepted; with `only_from` (an IP) a request
  // from anywhere else is rejected and named in `refused`, and the wait goes on.
  std::unique_ptr<PerftestControl> accept_one(interop::Deadline deadline, std::string* why, const std::string& only_from,
                                              std::vector<std::string>* refused);

 private:
  PerftestControlListener() = default;
  std::unique_ptr<EventChannel> channel_;
  Id id_;
  uint16_t port_ = 0;
};

}  // namespace qpo::cm
