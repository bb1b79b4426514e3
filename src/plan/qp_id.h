#pragma once
// Object ids in a plan. An object's id is its index in the checked scenario's list of its kind
// (a QP's in Scenario::qps, counted groups expanded; a device's in Scenario::devices, ...), the
// same on every host that plans the same file. exec keeps its records by id
// (exec/id_table.h); a name becomes an id where a user or another host names an object (a
// script's workers, a meeting's notes, an event's object): Plan::id_of, the one index.
#include <cstdint>
#include <string>

namespace qpo::scenario { struct Scenario; }

namespace qpo::plan {

using QpId = uint32_t;
inline constexpr QpId kNoQp = ~0u;
using ObjectId = uint32_t;
inline constexpr ObjectId kNoObject = ~0u;

// The kinds exec keeps by id: every scenario object. (Address handles are qpo's own, kept by
// the ids of the QPs or group they join; docs/architecture.md section 6.)
enum class ObjectKind : uint8_t { Device, Pd, Cq, Srq, Xrcd, Qp, Mr, Mw };
inline constexpr size_t kObjectKinds = 8;

// The id of the checked scenario's QP `name` (kNoQp: no QP has it). The planner's; exec asks
// the plan (Plan::qp_id).
QpId qp_id_in(const scenario::Scenario& s, const std::string& name);

}  // namespace qpo::plan
