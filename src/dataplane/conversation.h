#pragma once
// One side of a message-driven conversation on one QP, a work request at a time: post one and
// wait for its completion, or wait for the next receive and read its bytes. For peers whose
// messages say what to do next (rping: a SEND carrying a buffer's address, rkey and length, then
// an RDMA READ or WRITE there), where each step depends on the last message and nothing is
// pipelined. Receives come from the endpoint's pool (the executor's slots, posted at bring-up)
// and are reposted as they are taken. Throws DataplaneError (Timeout, Post, Completion, Usage).
#include <atomic>
#include <cstdint>
#include <deque>
#include <vector>

#include "dataplane/cq_router.h"
#include "dataplane/endpoint.h"
#include "dataplane/post.h"

namespace qpo::dataplane {

class Conversation {
 public:
  // `rx_depth`: the receives kept posted (the pool's layout is the caller's, already set).
  Conversation(Endpoint& ep, const CqAccess& access, uint32_t rx_depth, int timeout_ms, const std::atomic<bool>* stop);

  // Posts `r` (signaled) and waits for its completion; `what` names it in errors ("RDMA READ of ping 3").
  void post_and_wait(SendRequest r, const std::string& what);
  // The next message received (UD: without its GRH), in arrival order.
  std::vector<uint8_t> receive(const std::string& what);
  // True once the stop flag was seen (the last wait ended without its completion).
  bool stopped() const { return stopped_; }

 private:
  // Polls both CQs once; false when nothing came. Receives are queued, our send's completion noted.
  bool poll_once(const std::string& what);
  // Until the posted work request's completion (poll_once notes it) or the timeout.
  void wait_for_send(const std::string& what);

  Endpoint& ep_;
  CqHandle send_cq_, recv_cq_;
  uint32_t rx_depth_;
  int timeout_ms_;
  const std::atomic<bool>* stop_;
  std::deque<std::vector<uint8_t>> received_;
  uint64_t next_id_ = 0;
  uint64_t waiting_for_ = 0;
  bool send_done_ = false;
  bool stopped_ = false;
};

}  // namespace qpo::dataplane
