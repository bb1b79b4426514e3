#pragma once
// A buffer the hosts publish to each other (the exchange's MR entries), by kind and id: a
// scenario MR, a QP's slot buffer ("qpo.slots.<qp>"), a memory window, an external peer's
// buffer. exec keys its Directory by it (exec/exchange.h MrKey); a name becomes one here, in
// the planner, so that exec never resolves a name.
#include <compare>
#include <cstdint>
#include <optional>
#include <string>

namespace qpo::plan {

struct Plan;

struct BufferKey {
  enum class Kind : uint8_t { Mr, Slots, Window, External };
  Kind kind = Kind::Mr;
  uint32_t id = 0;  // the MR's, the slot buffer's QP's, the window's id; an external peer's index
  auto operator<=>(const BufferKey&) const = default;
};

// Which kind a name means when buffers of several kinds share it: the order a workload's
// remote_mr is read in (a window, an external peer's buffer, a scenario MR, a slot buffer).
inline constexpr BufferKey::Kind kBufferPrecedence[] = {BufferKey::Kind::Window, BufferKey::Kind::External,
                                                        BufferKey::Kind::Mr, BufferKey::Kind::Slots};

// A QP's slot buffer is named this, then the QP's name.
inline constexpr const char* kSlotsPrefix = "qpo.slots.";

// The key of the buffer `name` in `p`, in kBufferPrecedence's order; nullopt when `p` has none
// of that name.
std::optional<BufferKey> buffer_key(const Plan& p, const std::string& name);

}  // namespace qpo::plan
