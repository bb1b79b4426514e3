#include "util/async_event_names.h"

// Only the enum's values are used: util links nothing from libibverbs.
#include <infiniband/verbs.h>

#include "util/strings.h"

namespace qpo::util {

namespace {

using O = EventObject;

constexpr AsyncEventInfo kEvents[] = {
    {IBV_EVENT_CQ_ERR, "IBV_EVENT_CQ_ERR", O::Cq},
    {IBV_EVENT_QP_FATAL, "IBV_EVENT_QP_FATAL", O::Qp},
    {IBV_EVENT_QP_REQ_ERR, "IBV_EVENT_QP_REQ_ERR", O::Qp},
    {IBV_EVENT_QP_ACCESS_ERR, "IBV_EVENT_QP_ACCESS_ERR", O::Qp},
    {IBV_EVENT_COMM_EST, "IBV_EVENT_COMM_EST", O::Qp},
    {IBV_EVENT_SQ_DRAINED, "IBV_EVENT_SQ_DRAINED", O::Qp},
    {IBV_EVENT_PATH_MIG, "IBV_EVENT_PATH_MIG", O::Qp},
    {IBV_EVENT_PATH_MIG_ERR, "IBV_EVENT_PATH_MIG_ERR", O::Qp},
    {IBV_EVENT_DEVICE_FATAL, "IBV_EVENT_DEVICE_FATAL", O::Device},
    {IBV_EVENT_PORT_ACTIVE, "IBV_EVENT_PORT_ACTIVE", O::Port},
    {IBV_EVENT_PORT_ERR, "IBV_EVENT_PORT_ERR", O::Port},
    {IBV_EVENT_LID_CHANGE, "IBV_EVENT_LID_CHANGE", O::Port},
    {IBV_EVENT_PKEY_CHANGE, "IBV_EVENT_PKEY_CHANGE", O::Port},
    {IBV_EVENT_SM_CHANGE, "IBV_EVENT_SM_CHANGE", O::Port},
    {IBV_EVENT_SRQ_ERR, "IBV_EVENT_SRQ_ERR", O::Srq},
    {IBV_EVENT_SRQ_LIMIT_REACHED, "IBV_EVENT_SRQ_LIMIT_REACHED", O::Srq},
    {IBV_EVENT_QP_LAST_WQE_REACHED, "IBV_EVENT_QP_LAST_WQE_REACHED", O::Qp},
    {IBV_EVENT_CLIENT_REREGISTER, "IBV_EVENT_CLIENT_REREGISTER", O::Port},
    {IBV_EVENT_GID_CHANGE, "IBV_EVENT_GID_CHANGE", O::Port},
};

constexpr std::string_view kEventPrefix = "IBV_EVENT_";

}  // namespace

const char* event_object_name(EventObject o) {
  switch (o) {
    case EventObject::Qp: return "QP";
    case EventObject::Srq: return "SRQ";
    case EventObject::Cq: return "CQ";
    case EventObject::Port: return "port";
    case EventObject::Device: return "device";
  }
  return "?";
}

const AsyncEventInfo* async_event(int value) {
  for (const auto& e : kEvents)
    if (e.value == value) return &e;
  return nullptr;
}

const char* async_event_name(int value) {
  const auto* e = async_event(value);
  return e ? e->name : "IBV_EVENT_(unknown)";
}

const AsyncEventInfo* parse_async_event(std::string_view name) {
  std::string upper = to_upper(name);
  for (const auto& e : kEvents) {
    std::string_view full = e.name;
    if (upper == full || upper == full.substr(kEventPrefix.size())) return &e;
  }
  return nullptr;
}

std::vector<std::string> async_event_names() {
  std::vector<std::string> out;
  for (const auto& e : kEvents) out.emplace_back(e.name);
  return out;
}

}  // namespace qpo::util
