#include "plan/buffer_key.h"

#include "plan/plan.h"

namespace qpo::plan {

namespace {

std::optional<BufferKey> key_of_kind(const Plan& p, BufferKey::Kind kind, const std::string& name) {
  switch (kind) {
    case BufferKey::Kind::Window:
      if (auto id = p.id_of(ObjectKind::Mw, name); id != kNoObject) return BufferKey{kind, id};
      break;
    case BufferKey::Kind::External:
      if (auto id = p.peer_id(name); id != kNoObject && id >= p.qp_count())
        return BufferKey{kind, static_cast<uint32_t>(id - p.qp_count())};
      break;
    case BufferKey::Kind::Mr:
      if (auto id = p.id_of(ObjectKind::Mr, name); id != kNoObject) return BufferKey{kind, id};
      break;
    case BufferKey::Kind::Slots:
      if (name.rfind(kSlotsPrefix, 0) == 0)
        if (auto id = p.qp_id(name.substr(std::string(kSlotsPrefix).size())); id != kNoQp)
          return BufferKey{kind, id};
      break;
  }
  return std::nullopt;
}

}  // namespace

std::optional<BufferKey> buffer_key(const Plan& p, const std::string& name) {
  for (auto kind : kBufferPrecedence)
    if (auto k = key_of_kind(p, kind, name)) return k;
  return std::nullopt;
}

}  // namespace qpo::plan
