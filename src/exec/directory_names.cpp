#include "exec/directory_names.h"

#include <charconv>

namespace qpo::exec {

namespace {

constexpr const char* kSlotsPrefix = "qpo.slots.";
constexpr char kKindLetter[] = {'m', 's', 'w', 'x'};  // MrKey::Kind's order

// The key of `name` among the buffers of one kind.
std::optional<MrKey> key_of_kind(const plan::Plan& p, MrKey::Kind kind, const std::string& name) {
  switch (kind) {
    case MrKey::Kind::Window:
      if (auto id = p.id_of(plan::ObjectKind::Mw, name); id != plan::kNoObject) return MrKey{kind, id};
      break;
    case MrKey::Kind::External:
      if (auto id = p.peer_id(name); id != plan::kNoObject && id >= p.qp_count())
        return MrKey{kind, static_cast<uint32_t>(id - p.qp_count())};
      break;
    case MrKey::Kind::Mr:
      if (auto id = p.id_of(plan::ObjectKind::Mr, name); id != plan::kNoObject) return MrKey{kind, id};
      break;
    case MrKey::Kind::Slots:
      if (name.rfind(kSlotsPrefix, 0) == 0)
        if (auto id = p.qp_id(name.substr(std::string(kSlotsPrefix).size())); id != plan::kNoQp) return slots_key(id);
      break;
  }
  return std::nullopt;
}

}  // namespace

std::string mr_key_name(const plan::Plan& p, MrKey k) {
  switch (k.kind) {
    case MrKey::Kind::Mr: return p.name_of(plan::ObjectKind::Mr, k.id);
    case MrKey::Kind::Slots: {
      const std::string& qp = p.name_of(plan::ObjectKind::Qp, k.id);
      return qp.empty() ? "" : kSlotsPrefix + qp;
    }
    case MrKey::Kind::Window: return k.id < p.windows.size() ? p.windows[k.id].spec.name : "";
    case MrKey::Kind::External: return k.id < p.externals.size() ? p.externals[k.id].name : "";
  }
  return "";
}

std::optional<MrKey> mr_key_of(const plan::Plan& p, const std::string& name) {
  // As the plan reads a workload's remote_mr: a window before an external peer before an MR
  // (an MR and a window may share a name).
  for (auto kind : kByPrecedence)
    if (auto k = key_of_kind(p, kind, name)) return k;
  return std::nullopt;
}

std::string mr_key_text(MrKey k) {
  return kKindLetter[static_cast<size_t>(k.kind)] + std::to_string(k.id);
}

std::optional<MrKey> mr_key_from_text(const std::string& text) {
  if (text.size() < 2) return std::nullopt;
  MrKey k;
  size_t kind = 0;
  while (kind < sizeof kKindLetter && kKindLetter[kind] != text[0]) ++kind;
  if (kind == sizeof kKindLetter) return std::nullopt;
  k.kind = static_cast<MrKey::Kind>(kind);
  const char* end = text.data() + text.size();
  auto [next, ec] = std::from_chars(text.data() + 1, end, k.id);
  if (ec != std::errc() || next != end) return std::nullopt;
  return k;
}

}  // namespace qpo::exec
