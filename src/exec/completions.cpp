#include "exec/completions.h"

#include <chrono>
#include <thread>

namespace qpo::exec {

std::optional<ibv_wc> Completions::wait_tagged(ibv_cq* cq, uint64_t mask, uint64_t tag, int timeout_ms) {
  return wait_if(cq, [&](const ibv_wc& wc) { return (wc.wr_id & mask) == tag; }, timeout_ms);
}

std::optional<ibv_wc> Completions::wait(ibv_cq* cq, uint64_t wr_id, int timeout_ms) {
  return wait_tagged(cq, ~0ULL, wr_id, timeout_ms);
}

std::deque<ibv_wc> Completions::drain(ibv_cq* cq, uint32_t qp_num, int settle_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(settle_ms);
  auto& stash = stash_[cq];
  while (std::chrono::steady_clock::now() < deadline) {
    ibv_wc wcs[16];
    int n = ibv_poll_cq(cq, 16, wcs);
    if (n <= 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      continue;
    }
    for (int i = 0; i < n; ++i) stash.push_back(wcs[i]);
  }
  std::deque<ibv_wc> mine, others;
  for (const auto& wc : stash) (wc.qp_num == qp_num ? mine : others).push_back(wc);
  stash.swap(others);
  return mine;
}

const char* event_name(int e) {
  switch (e) {
    case IBV_EVENT_CQ_ERR: return "IBV_EVENT_CQ_ERR";
    case IBV_EVENT_QP_FATAL: return "IBV_EVENT_QP_FATAL";
    case IBV_EVENT_QP_REQ_ERR: return "IBV_EVENT_QP_REQ_ERR";
    case IBV_EVENT_QP_ACCESS_ERR: return "IBV_EVENT_QP_ACCESS_ERR";
    case IBV_EVENT_COMM_EST: return "IBV_EVENT_COMM_EST";
    case IBV_EVENT_SQ_DRAINED: return "IBV_EVENT_SQ_DRAINED";
    case IBV_EVENT_PATH_MIG: return "IBV_EVENT_PATH_MIG";
    case IBV_EVENT_PATH_MIG_ERR: return "IBV_EVENT_PATH_MIG_ERR";
    case IBV_EVENT_DEVICE_FATAL: return "IBV_EVENT_DEVICE_FATAL";
    case IBV_EVENT_PORT_ACTIVE: return "IBV_EVENT_PORT_ACTIVE";
    case IBV_EVENT_PORT_ERR: return "IBV_EVENT_PORT_ERR";
    case IBV_EVENT_LID_CHANGE: return "IBV_EVENT_LID_CHANGE";
    case IBV_EVENT_PKEY_CHANGE: return "IBV_EVENT_PKEY_CHANGE";
    case IBV_EVENT_SM_CHANGE: return "IBV_EVENT_SM_CHANGE";
    case IBV_EVENT_SRQ_ERR: return "IBV_EVENT_SRQ_ERR";
    case IBV_EVENT_SRQ_LIMIT_REACHED: return "IBV_EVENT_SRQ_LIMIT_REACHED";
    case IBV_EVENT_QP_LAST_WQE_REACHED: return "IBV_EVENT_QP_LAST_WQE_REACHED";
    case IBV_EVENT_CLIENT_REREGISTER: return "IBV_EVENT_CLIENT_REREGISTER";
    case IBV_EVENT_GID_CHANGE: return "IBV_EVENT_GID_CHANGE";
    default: return "IBV_EVENT_(unknown)";
  }
}

}  // namespace qpo::exec
