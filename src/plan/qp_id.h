#pragma once
// A QP's id in a plan: its index in the checked scenario's QP list (counted groups expanded),
// the same on every host that plans the same file. exec keeps its QP records by id
// (exec/qp_table.h); a name becomes an id where a user or another host names a QP (a
// script's workers, a meeting's notes, an event's object): Plan::qp_id, the one index.
#include <cstdint>
#include <string>

namespace qpo::scenario { struct Scenario; }

namespace qpo::plan {

using QpId = uint32_t;
inline constexpr QpId kNoQp = ~0u;

// The id of the checked scenario's QP `name` (kNoQp: no QP has it). The planner's; exec asks
// the plan (Plan::qp_id).
QpId qp_id_in(const scenario::Scenario& s, const std::string& name);

}  // namespace qpo::plan
