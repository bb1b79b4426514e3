#pragma once
// Sleeping until a CQ has work (event mode, perftest -e). The order matters: arm the CQs, poll
// them once more (a completion that landed before arming raises no event), and only when that
// finds nothing, block on the channels.
#include <infiniband/verbs.h>

#include <span>
#include <string>

#include "dataplane/cq_router.h"

namespace qpo::dataplane {

struct EventCq {
  ibv_cq* cq = nullptr;
  ibv_comp_channel* channel = nullptr;
};

// ibv_req_notify_cq on each; throws DataplaneError (Post) naming `qp` when it fails.
void arm_cqs(std::span<const EventCq> cqs, const std::string& qp);
// Blocks until a channel has an event or timeout_ms passes; gets and acks the events. True
// when an event arrived.
bool block_on_channels(std::span<const EventCq> cqs, int timeout_ms);

}  // namespace qpo::dataplane
