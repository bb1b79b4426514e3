#include "check/provider.h"

#include "scenario/capabilities.h"

namespace qpo::check {

namespace {

std::string hint_for(const spec::Deviation& d, const spec::RuleTable& rules) {
  auto key = spec::ProbeCaseKey::parse(d.what);
  if (!key) return "";
  switch (key->kind) {
    case spec::ProbeCaseKey::Kind::With:
      if (auto bit = rules.parse_mask(key->attr, nullptr))
        return "leave out " + rules.mask_fields(*bit) + " on this device";
      return "";
    case spec::ProbeCaseKey::Kind::Value: return "use another value of " + key->attr + " on this device";
    default: return "this device does not take this transition; run it on another provider";
  }
}

}  // namespace

void check_provider(const scenario::Scenario& checked, const spec::ProviderEntry& provider, const std::string& origin,
                    diag::DiagSink& sink) {
  // A capability the provider lacks: the run would stop before bring-up as unsupported.
  for (const auto& need : scenario::needed_capabilities(checked)) {
    auto gap = provider.unsupported.find(need.cap);
    if (gap == provider.unsupported.end()) continue;
    auto& w = sink.warning("Q310", need.loc, need.path,
                           "provider " + provider.name + " lacks " + need.cap + " (" + gap->second +
                               "): on it `qpo run` reports the scenario unsupported by device (exit 77)");
    w.rule = "unsupported: of provider " + provider.name + " in " + origin;
    w.hint = "run it on a device that has " + need.cap + "; in a suite the skip is not a failure";
  }
  const auto& rules = spec::RuleTable::builtin();
  for (const auto& q : checked.qps) {
    if (q.type < 0) continue;
    for (const auto& t : q.transitions) {
      if (!t.predicted_ok) continue;  // an EINVAL the tables predict is an error already
      auto value_of = [&](const std::string& field) -> std::optional<uint64_t> {
        const auto* a = t.attr(field);
        if (!a || !a->valid || a->symbol != scenario::Symbol::None) return std::nullopt;
        return a->number;
      };
      for (const auto* d : spec::refusals(provider, rules, q.type_name, t.from, t.to, t.mask, value_of)) {
        std::string cell = spec::cell_text(q.type_name, t.from, t.to);
        auto& w = sink.warning("Q308", t.loc, t.path,
                               "provider " + provider.name + " answers " + d->answered + " to " + cell + " " +
                                   d->what + ", which the rule tables predict succeeds");
        w.rule = "deviations of provider " + provider.name + " in " + origin;
        if (provider.probed) w.rule += " (qpo probe " + provider.probed->device + ", " + provider.probed->kernel + ", " +
                                       provider.probed->date + ")";
        w.hint = hint_for(*d, rules);
      }
    }
  }
}

}  // namespace qpo::check
