#include "dataplane/wait.h"

#include <poll.h>

#include <vector>

#include "dataplane/error.h"

namespace qpo::dataplane {

void arm_cqs(std::span<const EventCq> cqs, const std::string& qp) {
  for (const auto& c : cqs)
    if (int e = ibv_req_notify_cq(c.cq, 0)) post_error(qp, "ibv_req_notify_cq", e, "");
}

bool block_on_channels(std::span<const EventCq> cqs, int timeout_ms) {
  // One entry per channel: two CQs may share one, and a second ibv_get_cq_event on a channel
  // with a single pending event would block.
  std::vector<ibv_comp_channel*> chans;
  std::vector<pollfd> fds;
  for (const auto& c : cqs) {
    bool seen = false;
    for (auto* ch : chans) seen |= ch == c.channel;
    if (seen) continue;
    chans.push_back(c.channel);
    fds.push_back({c.channel->fd, POLLIN, 0});
  }
  if (::poll(fds.data(), fds.size(), timeout_ms) <= 0) return false;
  for (size_t i = 0; i < fds.size(); ++i) {
    if (!(fds[i].revents & POLLIN)) continue;
    ibv_cq* cq = nullptr;
    void* ctx = nullptr;
    if (ibv_get_cq_event(chans[i], &cq, &ctx) == 0) ibv_ack_cq_events(cq, 1);
  }
  return true;
}

}  // namespace qpo::dataplane
