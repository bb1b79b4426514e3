#pragma once
// The exchange's MR entries (exchange.h MrKey) named: the names scripts, workloads and
// messages use for them (the data path's MR tables). A QP's slot buffer is "qpo.slots.<qp>";
// the others go by their scenario or `externals:` name. A name becomes a key in the planner
// (plan/buffer_key.h), never here.
#include <optional>
#include <string>

#include "exec/exchange.h"
#include "plan/plan.h"

namespace qpo::exec {

inline MrKey slots_key(plan::QpId qp) { return {MrKey::Kind::Slots, qp}; }

// The name of `k`'s buffer; "" when its id is not in the plan.
std::string mr_key_name(const plan::Plan& p, MrKey k);

// Which kind a name means when buffers of several kinds share it (plan/buffer_key.h).
inline constexpr const auto& kByPrecedence = plan::kBufferPrecedence;

// The key's text on the agents' wire ("m3", "s12", "w0", "x1") and back (nullopt: not one).
std::string mr_key_text(MrKey k);
std::optional<MrKey> mr_key_from_text(const std::string& text);

}  // namespace qpo::exec
