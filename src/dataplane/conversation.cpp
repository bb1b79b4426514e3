#include "dataplane/conversation.h"

#include <chrono>
#include <thread>

#include "dataplane/error.h"
#include "dataplane/recv_pool.h"

namespace qpo::dataplane {

namespace {
// The conversation's own work-request ids, apart from a script's small ones (it runs alone on its QP).
constexpr uint64_t kConversationTag = 1ull << 61;
}  // namespace

Conversation::Conversation(Endpoint& ep, const CqAccess& access, uint32_t rx_depth, int timeout_ms,
                           const std::atomic<bool>* stop)
    : ep_(ep), send_cq_(ep.send_cq, access), recv_cq_(ep.recv_cq, access), rx_depth_(rx_depth),
      timeout_ms_(timeout_ms), stop_(stop) {
  if (!ep_.qp) usage_error(ep_.qp_name, "has no verbs QP (not brought up?)");
  if (!ep_.recv_pool) usage_error(ep_.qp_name, "a conversation needs a receive pool");
}

void Conversation::post_and_wait(SendRequest r, const std::string& what) {
  r.id = kConversationTag | ++next_id_;  // below kUserIdLimit: post_sends takes no loop's tags
  r.signaled = true;
  waiting_for_ = r.id;
  send_done_ = false;
  post_sends(ep_, {&r, 1});
  wait_for_send(what);
}

std::vector<uint8_t> Conversation::receive(const std::string& what) {
  bool got = !received_.empty();
  if (!got) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms_);
    for (uint32_t spins = 0; received_.empty(); ++spins) {
      if (poll_once(what)) continue;
      if (spins % 64) continue;
      if (stop_ && stop_->load()) {
        stopped_ = true;
        return {};
      }
      if (std::chrono::steady_clock::now() > deadline)
        throw DataplaneError(DataplaneError::Kind::Timeout, ep_.qp_name,
                             "QP '" + ep_.qp_name + "': no " + what + " for " + std::to_string(timeout_ms_) +
                                 " ms (is the peer running?)");
      std::this_thread::yield();
    }
  }
  auto m = std::move(received_.front());
  received_.pop_front();
  return m;
}

void Conversation::wait_for_send(const std::string& what) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms_);
  for (uint32_t spins = 0; !send_done_; ++spins) {  // poll_once sets it
    if (poll_once(what)) continue;
    if (spins % 64) continue;
    if (std::chrono::steady_clock::now() > deadline)
      throw DataplaneError(DataplaneError::Kind::Timeout, ep_.qp_name,
                           "QP '" + ep_.qp_name + "': no completion of " + what + " for " + std::to_string(timeout_ms_) + " ms");
    std::this_thread::yield();
  }
}

bool Conversation::poll_once(const std::string& what) {
  ibv_wc wc[4];
  bool any = false;
  for (const CqHandle* cq : {&send_cq_, &recv_cq_}) {
    int n = cq->poll(4, wc);
    if (n < 0) post_error(ep_.qp_name, "ibv_poll_cq", -n, "waiting for " + what);
    for (int i = 0; i < n; ++i) {
      any = true;
      const ibv_wc& c = wc[i];
      if (c.status != IBV_WC_SUCCESS)
        completion_error(ep_.qp_name, c.status, c.vendor_err,
                         std::string(c.wr_id & kPoolRecvTag ? "a receive" : "a work request") + " while waiting for " + what);
      if (c.opcode & IBV_WC_RECV) {
        const uint8_t* data = ep_.recv_pool->complete(c.wr_id);
        if (!data) continue;  // not a receive of the pool's
        uint32_t grh = is_ud(ep_) ? kGrhBytes : 0;
        uint32_t len = c.byte_len > grh ? c.byte_len - grh : 0;
        received_.emplace_back(data + grh, data + grh + len);
        ep_.recv_pool->fill(ep_, rx_depth_, 1);
      } else if (c.wr_id == waiting_for_) {
        send_done_ = true;
      }
    }
    if (cq->cq == recv_cq_.cq) break;  // one CQ for both: polled once
  }
  return any;
}

}  // namespace qpo::dataplane
