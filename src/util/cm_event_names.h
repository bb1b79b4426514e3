#pragma once
// The rdma_cm events a connection may be expected to end with (a scenario's `cm: expect:
// cm_event:`), by the short names scenarios use and their enum rdma_cm_event_type values: the
// one table for the loader, the planner and the run's judgement.
#include <string_view>
#include <vector>

namespace qpo::util {

struct CmEventName {
  const char* name;  // "REJECTED" (the header's RDMA_CM_EVENT_REJECTED)
  int value;         // enum rdma_cm_event_type
};

// REJECTED, UNREACHABLE, ADDR_ERROR, ROUTE_ERROR, CONNECT_ERROR.
const std::vector<CmEventName>& cm_expectable_events();
// The entry of `name` (exactly as in the table); nullptr when it is not one.
const CmEventName* cm_expectable_event(std::string_view name);

}  // namespace qpo::util
