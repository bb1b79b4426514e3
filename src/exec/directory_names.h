#pragma once
// The exchange's MR entries (exchange.h MrKey) by name: where the directory's ids meet the
// names that scripts, workloads, memory-window notes and messages use. A QP's slot buffer is
// "qpo.slots.<qp>"; the others go by their scenario or `externals:` name.
#include <optional>
#include <string>

#include "exec/exchange.h"
#include "plan/plan.h"

namespace qpo::exec {

inline MrKey slots_key(plan::QpId qp) { return {MrKey::Kind::Slots, qp}; }

// The name of `k`'s buffer; "" when its id is not in the plan.
std::string mr_key_name(const plan::Plan& p, MrKey k);

// The key of the buffer `name` (a scenario MR, a memory window, an external peer, or a QP's
// "qpo.slots.<qp>"); nullopt when the plan has none of that name.
std::optional<MrKey> mr_key_of(const plan::Plan& p, const std::string& name);

// The key's text on the agents' wire ("m3", "s12", "w0", "x1") and back (nullopt: not one).
std::string mr_key_text(MrKey k);
std::optional<MrKey> mr_key_from_text(const std::string& text);

}  // namespace qpo::exec
