#include "exec/directory_names.h"

#include <charconv>

namespace qpo::exec {

namespace {

constexpr char kKindLetter[] = {'m', 's', 'w', 'x'};  // MrKey::Kind's order

}  // namespace

std::string mr_key_name(const plan::Plan& p, MrKey k) {
  switch (k.kind) {
    case MrKey::Kind::Mr: return p.name_of(plan::ObjectKind::Mr, k.id);
    case MrKey::Kind::Slots: {
      const std::string& qp = p.name_of(plan::ObjectKind::Qp, k.id);
      return qp.empty() ? "" : plan::kSlotsPrefix + qp;
    }
    case MrKey::Kind::Window: return k.id < p.windows.size() ? p.windows[k.id].name : "";
    case MrKey::Kind::External: return k.id < p.externals.size() ? p.externals[k.id].name : "";
  }
  return "";
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
