#include "util/cm_event_names.h"

#include <rdma/rdma_cma.h>

namespace qpo::util {

const std::vector<CmEventName>& cm_expectable_events() {
  static const std::vector<CmEventName> k{{"REJECTED", RDMA_CM_EVENT_REJECTED},
                                          {"UNREACHABLE", RDMA_CM_EVENT_UNREACHABLE},
                                          {"ADDR_ERROR", RDMA_CM_EVENT_ADDR_ERROR},
                                          {"ROUTE_ERROR", RDMA_CM_EVENT_ROUTE_ERROR},
                                          {"CONNECT_ERROR", RDMA_CM_EVENT_CONNECT_ERROR}};
  return k;
}

const CmEventName* cm_expectable_event(std::string_view name) {
  for (const auto& e : cm_expectable_events())
    if (name == e.name) return &e;
  return nullptr;
}

}  // namespace qpo::util
