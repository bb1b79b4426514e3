#include "exec/async_events.h"

#include <fcntl.h>
#include <poll.h>

namespace qpo::exec {

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


namespace {

std::string cq_named(const RunState& st, const ibv_cq* cq) {
  for (const auto& [name, c] : st.cqs)
    if (c->get() == cq) return "CQ '" + name + "' (a completion did not fit: it holds " + std::to_string(cq->cqe) + ")";
  return "a CQ of another owner";
}

std::string qp_named(const RunState& st, const ibv_qp* qp) {
  for (const auto& [name, q] : st.qps)
    if (q.qp && q.qp->get() == qp) return "QP '" + name + "'";
  return "a QP of another owner";
}

std::string srq_named(const RunState& st, const ibv_srq* srq) {
  for (const auto& [name, s] : st.srqs)
    if (s.srq && s.srq->get() == srq) return "SRQ '" + name + "'";
  return "an SRQ of another owner";
}

// What the event is about, from the element its type fills in (ibv_get_async_event(3)).
std::string element_of(const RunState& st, const ibv_async_event& ev) {
  switch (ev.event_type) {
    case IBV_EVENT_CQ_ERR: return cq_named(st, ev.element.cq);
    case IBV_EVENT_SRQ_ERR:
    case IBV_EVENT_SRQ_LIMIT_REACHED: return srq_named(st, ev.element.srq);
    case IBV_EVENT_PORT_ACTIVE:
    case IBV_EVENT_PORT_ERR:
    case IBV_EVENT_LID_CHANGE:
    case IBV_EVENT_PKEY_CHANGE:
    case IBV_EVENT_SM_CHANGE:
    case IBV_EVENT_CLIENT_REREGISTER:
    case IBV_EVENT_GID_CHANGE: return "port " + std::to_string(ev.element.port_num);
    case IBV_EVENT_DEVICE_FATAL: return "the device";
    default: return qp_named(st, ev.element.qp);
  }
}

}  // namespace

std::optional<ibv_async_event> take_async_event(ibv_context* ctx, int wait_ms) {
  int flags = fcntl(ctx->async_fd, F_GETFL);
  if (!(flags & O_NONBLOCK)) fcntl(ctx->async_fd, F_SETFL, flags | O_NONBLOCK);
  pollfd pfd{ctx->async_fd, POLLIN, 0};
  if (poll(&pfd, 1, wait_ms) <= 0) return std::nullopt;
  ibv_async_event ev{};
  if (ibv_get_async_event(ctx, &ev) != 0) return std::nullopt;
  ibv_async_event copy = ev;  // the type and the element pointer stay valid to read
  ibv_ack_async_event(&ev);
  return copy;
}

std::string describe_async_events(const RunState& st) {
  std::string out;
  for (const auto& [name, d] : st.devices) {
    if (!d.res) continue;
    while (auto ev = take_async_event(d.ctx().get(), 0))
      out += std::string(out.empty() ? "; the device raised " : ", ") + event_name(ev->event_type) + " on " +
             element_of(st, *ev);
  }
  return out;
}

}  // namespace qpo::exec
