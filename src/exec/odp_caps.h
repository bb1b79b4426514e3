#pragma once
// Whether a device's on-demand paging capabilities (ibv_query_device_ex's odp_caps) cover the
// QP types that use an ODP MR: the run's capability check, kept apart so it can be tested on
// any machine with hand-made caps.
#include <infiniband/verbs.h>

#include <set>
#include <string>

#include "spec/rules.h"

namespace qpo::exec {

// "" when `caps` allow ODP for every type in `qp_types` (RC, UC, UD; others ignored),
// else why not, e.g. "odp_caps.general_caps lacks IBV_ODP_SUPPORT" or
// "no ODP for UD QPs (odp_caps.per_transport_caps.ud_odp_caps is 0)".
std::string odp_problem(const ibv_odp_caps& caps, const std::set<spec::QpType>& qp_types);

}  // namespace qpo::exec
