#pragma once
// Per-provider known deviations (schemas/providers.yaml): capabilities a provider lacks that
// no ibv_query_device bit reveals, and what `qpo probe` found the provider answers differently
// from the rule tables (refused transitions and masks, values it enforces or stores otherwise).
// The same format is read from the compiled-in file, from `qpo validate --provider FILE`, and
// written by `qpo probe --out FILE`.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "spec/rules.h"

namespace qpo::spec {

// One probe case, in the words providers.yaml uses:
//   "minimal mask"        the transition's required attributes (+ IBV_QP_STATE)
//   "invalid transition"  IBV_QP_STATE alone, on a (cur, next) pair the table does not allow
//   "without IBV_QP_AV"   the minimal mask less one required bit
//   "with IBV_QP_QKEY"    the minimal mask plus one optional or forbidden bit
//   "timeout = 32"        the minimal mask plus the field's bit, the field set to the value
struct ProbeCaseKey {
  enum class Kind { Minimal, Invalid, Without, With, Value };
  Kind kind = Kind::Minimal;
  std::string attr;  // IBV_QP_* for Without/With; the ibv_qp_attr field for Value
  uint64_t value = 0;
  std::string text() const;
  // nullopt when `text` is none of the forms above.
  static std::optional<ProbeCaseKey> parse(std::string_view text);
};

// "RC INIT->RTR": where a case ran.
std::string cell_text(const std::string& type, QpState from, QpState to);

struct Deviation {
  std::string what;       // ProbeCaseKey::text()
  std::string predicted;  // "ok", "EINVAL", "ok, reads back 0"
  std::string answered;   // what the device answered, in the same words
  std::vector<std::string> in;  // cell_text() of each transition where it answered so
  bool refuses_predicted_ok() const { return predicted.rfind("ok", 0) == 0 && answered.rfind("ok", 0) != 0; }
};

struct ProbeRecord {
  std::string device, kernel, date;
  uint64_t cases = 0, agreed = 0;
  std::map<std::string, std::string> not_probed;  // QP type -> why
};

// What the provider does on the wire that the spec leaves open (timer granularity, whether
// it sends CNPs, what it does with a corrupt packet), with the scenario whose capture shows it
// (scenarios/wire/, `qpo run --lab --capture`). Written by hand from such a run, kept by probes.
struct WireFinding {
  std::string topic, finding, scenario;
};

// A completion flag the provider reports in another bit than libibverbs' enum says: rxe sets
// the kernel's IB_WC_WITH_INVALIDATE (1 << 2) where IBV_WC_WITH_INV (1 << 3) belongs.
struct CompletionFlag {
  unsigned bit = 0;  // the bit the provider sets
  std::string why;
};

struct ProviderEntry {
  std::string name, description;
  std::vector<WireFinding> wire;
  std::map<std::string, CompletionFlag> completion_flags;  // "IBV_WC_WITH_INV" -> its bit here
  std::map<std::string, std::string> unsupported;  // capability -> why
  std::optional<ProbeRecord> probed;
  std::vector<Deviation> deviations;
};

class ProviderTable {
 public:
  static const ProviderTable& builtin();
  // Parses a providers document; throws std::runtime_error naming `origin` and the key. A file
  // is read by cli::load_provider_file (capped, regular files only).
  static ProviderTable parse(std::string_view yaml_text, const std::string& origin);

  const ProviderEntry* entry(const std::string& provider) const;
  const std::map<std::string, ProviderEntry>& entries() const { return entries_; }
  // Adds or replaces the probe's part of `e` (probed, deviations), keeping a known entry's
  // description and unsupported list when `e` has none.
  void merge_probe(const ProviderEntry& e);
  // The document in providers.yaml's format (a fixed header comment, then every entry).
  std::string to_yaml() const;

  // The wc_flags bit that means `flag` ("IBV_WC_WITH_INV") in `provider`'s completions:
  // its `completion_flags:` entry, else `standard` (libibverbs' value).
  uint32_t completion_flag(const std::string& provider, const std::string& flag, uint32_t standard) const;
  // The reason `provider` lacks `capability`, or nullopt when it is not known to lack it.
  std::optional<std::string> lacks(const std::string& provider, const std::string& capability) const;

  struct TransitionDeviation {
    std::string type, from, to, errno_name, why;
  };
  // A transition the generic table allows but `provider` refuses even with its minimal mask,
  // or nullptr.
  const TransitionDeviation* transition_deviation(const std::string& provider, const std::string& type,
                                                          const std::string& from, const std::string& to) const;


 private:
  void index_transitions();
  std::map<std::string, ProviderEntry> entries_;
  std::map<std::string, std::vector<TransitionDeviation>> transitions_;  // from entries_, by provider
};

// Whether `d` applies to the call: the cell is listed and the case's condition holds.
bool deviation_applies(const Deviation& d, const RuleTable& rules, const std::string& cell, Mask mask,
                       const std::optional<uint64_t>& field_value);

// The deviations by which provider `e` refuses an ibv_modify_qp the rule tables predict ok:
// the transition itself, a bit of `mask`, or a value the call sets (`value_of(field)` returns
// the value an ibv_qp_attr field is set to, or nullopt).
template <typename ValueOf>
std::vector<const Deviation*> refusals(const ProviderEntry& e, const RuleTable& rules, const std::string& type,
                                       QpState from, QpState to, Mask mask, ValueOf value_of) {
  std::vector<const Deviation*> out;
  std::string cell = cell_text(type, from, to);
  for (const auto& d : e.deviations) {
    if (!d.refuses_predicted_ok()) continue;
    auto key = ProbeCaseKey::parse(d.what);
    std::optional<uint64_t> v;
    if (key && key->kind == ProbeCaseKey::Kind::Value) v = value_of(key->attr);
    if (deviation_applies(d, rules, cell, mask, v)) out.push_back(&d);
  }
  return out;
}

}  // namespace qpo::spec
