#pragma once
// The verbs rule tables: which ibv_modify_qp attributes each (QP type, cur -> next) transition
// requires and accepts, plus value ranges and defaults. Loaded from schemas/verbs-rules.yaml
// (compiled in). `check()` is ib_modify_qp_is_ok() from Linux 6.1, driven by the data.
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace qpo::spec {

enum class QpState : uint8_t { RESET, INIT, RTR, RTS, SQD, SQE, ERR };
inline constexpr int kStateCount = 7;
using Mask = uint32_t;

const char* state_name(QpState s);
// "RTS", "rts", "IBV_QPS_RTS"
std::optional<QpState> parse_state(std::string_view text);

// A QP type as code compares it (the spelling is the rule table's `name`, from
// schemas/verbs-rules.yaml). The values are enum ibv_qp_type's, as the table's `ibv:` gives
// them; src/verbs/qp_type.h converts and checks them against <infiniband/verbs.h>.
enum class QpType : int { Unknown = -1, RC = 2, UC = 3, UD = 4, RAW_PACKET = 8, XRC_SEND = 9, XRC_RECV = 10 };
inline bool is_xrc(QpType t) { return t == QpType::XRC_SEND || t == QpType::XRC_RECV; }

struct QpTypeInfo {
  std::string name;    // verbs spelling without prefix: RC, XRC_SEND
  std::string kernel;  // IB_QPT_XRC_INI
  int ibv = 0;         // enum ibv_qp_type value
  bool user = true;    // creatable with ibv_create_qp
  QpType kind() const { return user ? static_cast<QpType>(ibv) : QpType::Unknown; }
};

struct AttrInfo {
  std::string mask_name;            // IBV_QP_PATH_MTU
  int bit = 0;
  std::vector<std::string> fields;  // struct ibv_qp_attr members covered by the bit
  Mask mask() const { return Mask{1} << bit; }
};

struct ValueRule {
  std::string field;
  std::string type;         // uint, enum, flags, ah, cap, bool, gid
  std::string enum_name;    // for enum/flags: key into RuleTable::enums()
  bool has_range = false;
  uint64_t min = 0, max = 0;
  // Who rejects a value below min and above max: kernel | provider | field | none | device | lint
  // (schemas/verbs-rules.yaml). Equal unless the rule gives `enforced_by: { below: .., above: .. }`.
  std::string below_by, above_by;
  std::vector<std::string> providers;  // a bound enforced by `provider`: which ones return EINVAL
  std::string default_text; // "14", "peer", "auto", "random", "device"; empty: no default
  std::string note;
  std::string device_cap;   // ibv_device_attr member that bounds it
};

enum class Bound { Below, Above };
inline Bound bound_of(const ValueRule& r, uint64_t value) { return value < r.min ? Bound::Below : Bound::Above; }
inline const std::string& enforced_by(const ValueRule& r, Bound b) { return b == Bound::Below ? r.below_by : r.above_by; }
inline bool per_bound(const ValueRule& r) { return r.below_by != r.above_by; }
// "kernel", or "below: none, above: provider" when the bounds differ.
std::string enforced_by_text(const ValueRule& r);
// Who rejects a value past one bound of the rule's range, in words ("providers rxe, rdmavt
// reject it: EINVAL; ..."), for diagnostics.
std::string enforcer_text(const ValueRule& r, Bound b);
// Both bounds, for `qpo rules show --values`: one text when they agree, else
// "below 1: ...; above 5: ...".
std::string enforcer_text(const ValueRule& r);
// Whether the device of provider `provider` ("rxe") returns EINVAL for a value past the bound.
bool refuses(const ValueRule& r, Bound b, const std::string& provider);
// Whether the kernel accepts a value past the bound (validate warns instead of failing).
inline bool accepted_by_kernel(const ValueRule& r, Bound b) {
  const auto& by = enforced_by(r, b);
  return by == "lint" || by == "field" || by == "none";
}

struct Cell {
  bool valid = false;
  std::vector<Mask> required;  // indexed by QP type index
  std::vector<Mask> optional;
};

// Result of checking one ibv_modify_qp call against the table.
struct CheckResult {
  bool ok = true;
  QpState from = QpState::RESET, to = QpState::RESET;  // `to` as the kernel sees it
  bool invalid_transition = false;  // (from -> to) is not a valid cell
  bool cur_state_illegal = false;   // IBV_QP_CUR_STATE given while not in RTR/RTS/SQD/SQE
  Mask missing = 0;                 // required attributes absent from the mask
  Mask forbidden = 0;               // attributes outside required + optional + IBV_QP_STATE
};

struct MrAccessRule {
  std::vector<std::string> if_any;
  std::string need;
  std::string enforced_by;
};

class RuleTable {
 public:
  // Parsed once from the compiled-in schemas/verbs-rules.yaml.
  static const RuleTable& builtin();
  // Parse a rules document; throws std::runtime_error naming the key on malformed data.
  static RuleTable parse(std::string_view yaml_text);

  const std::string& source() const { return source_; }
  const std::vector<QpTypeInfo>& types() const { return types_; }
  // RC, XRC_SEND, IBV_QPT_RC, and the kernel names XRC_INI/IB_QPT_XRC_INI; -1 when unknown.
  int type_index(std::string_view name) const;
  std::vector<std::string> type_names() const;

  const Cell& cell(QpState from, QpState to) const {
    return cells_[static_cast<int>(from)][static_cast<int>(to)];
  }
  Mask required(int type, QpState from, QpState to) const;
  Mask optional(int type, QpState from, QpState to) const;
  bool cur_state_allowed_from(QpState s) const { return cur_state_from_ & (1u << static_cast<int>(s)); }
  // The bits uverbs removes from a user-space call's mask for this QP type (ignored, not EINVAL).
  Mask user_space_ignores(int type) const {
    return type >= 0 && static_cast<size_t>(type) < user_space_ignores_.size() ? user_space_ignores_[static_cast<size_t>(type)] : 0;
  }

  // ib_modify_qp_is_ok(): `to` is where the caller wants to go; the kernel uses `from` when
  // IBV_QP_STATE is absent from the mask, and so does this.
  CheckResult check(int type, QpState from, QpState to, Mask mask) const;

  const std::vector<AttrInfo>& attributes() const { return attrs_; }
  const AttrInfo* attr_by_field(std::string_view field) const;
  const AttrInfo* attr_by_bit(int bit) const;
  // "IBV_QP_STATE | IBV_QP_PORT"; unknown bits as 0x... ; "0" for an empty mask.
  std::string mask_names(Mask m, std::string_view sep = " | ") const;
  // The struct fields a mask covers, for hints: "min_rnr_timer".
  std::string mask_fields(Mask m, std::string_view sep = ", ") const;
  // "0x31", "49", "IBV_QP_STATE|IBV_QP_PORT", "STATE|PORT"; error text on failure.
  std::optional<Mask> parse_mask(std::string_view text, std::string* error) const;
  Mask known_bits() const { return known_bits_; }

  const ValueRule* value_rule(std::string_view field) const;
  const std::map<std::string, ValueRule>& value_rules() const { return values_; }
  const std::map<std::string, ValueRule>& ah_fields() const { return ah_fields_; }
  const std::map<std::string, ValueRule>& grh_fields() const { return grh_fields_; }
  // enum name -> (IBV_ spelling -> value), in file order
  const std::vector<std::pair<std::string, uint64_t>>* enum_values(std::string_view name) const;
  const std::vector<MrAccessRule>& mr_access_rules() const { return mr_rules_; }

 private:
  friend struct RulesLoader;
  std::string source_;
  std::vector<QpTypeInfo> types_;
  std::vector<AttrInfo> attrs_;
  std::array<std::array<Cell, kStateCount>, kStateCount> cells_{};
  uint32_t cur_state_from_ = 0;
  std::vector<Mask> user_space_ignores_;  // per type
  Mask known_bits_ = 0;
  std::map<std::string, ValueRule> values_, ah_fields_, grh_fields_;
  std::map<std::string, std::vector<std::pair<std::string, uint64_t>>, std::less<>> enums_;
  std::vector<MrAccessRule> mr_rules_;
};

}  // namespace qpo::spec
