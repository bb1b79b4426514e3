#include "exec/directory_names.h"

#include <charconv>

namespace qpo::exec {

namespace {

constexpr const char* kSlotsPrefix = "qpo.slots.";
constexpr char kKindLetter[] = {'m', 's', 'w', 'x'};  // MrKey::Kind's order

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
  if (auto id = p.id_of(plan::ObjectKind::Mr, name); id != plan::kNoObject) return MrKey{MrKey::Kind::Mr, id};
  if (auto id = p.id_of(plan::ObjectKind::Mw, name); id != plan::kNoObject) return MrKey{MrKey::Kind::Window, id};
  if (name.rfind(kSlotsPrefix, 0) == 0)
    if (auto id = p.qp_id(name.substr(std::string(kSlotsPrefix).size())); id != plan::kNoQp) return slots_key(id);
  if (auto id = p.peer_id(name); id != plan::kNoObject && id >= p.qp_count())
    return MrKey{MrKey::Kind::External, static_cast<uint32_t>(id - p.qp_count())};
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
