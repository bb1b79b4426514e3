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

// Which kind a name means when buffers of several kinds share it: the order the plan resolves a
// workload's remote_mr in (a window, an external peer's buffer, a scenario MR, a slot buffer).
inline constexpr MrKey::Kind kByPrecedence[] = {MrKey::Kind::Window, MrKey::Kind::External, MrKey::Kind::Mr,
                                                 MrKey::Kind::Slots};

// The key of the buffer `name` (a memory window, an external peer, a scenario MR, or a QP's
// "qpo.slots.<qp>", in that precedence); nullopt when the plan has none of that name.
std::optional<MrKey> mr_key_of(const plan::Plan& p, const std::string& name);

// The key's text on the agents' wire ("m3", "s12", "w0", "x1") and back (nullopt: not one).
std::string mr_key_text(MrKey k);
std::optional<MrKey> mr_key_from_text(const std::string& text);

}  // namespace qpo::exec
