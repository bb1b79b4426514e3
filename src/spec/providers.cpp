#include "spec/providers.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "util/strings.h"

namespace qpo::spec {

extern const char kBuiltinProvidersYaml[];

namespace {

const char kHeader[] =
    "# Known deviations of RDMA providers from qpo's rule tables (schemas/verbs-rules.yaml).\n"
    "#   unsupported: what a provider lacks that no ibv_query_device bit tells; qpo reports such a\n"
    "#     scenario as \"unsupported by device (<provider>)\" instead of attempting and failing.\n"
    "#     Capability names match the scenario's `requires:` list.\n"
    "#   probed, deviations: written by `qpo probe DEVICE --out FILE` on a live device. Each\n"
    "#     deviation is a probe case (\"minimal mask\", \"invalid transition\", \"with IBV_QP_X\",\n"
    "#     \"without IBV_QP_X\", \"field = value\") on the transitions listed in `in`, where the\n"
    "#     device's ibv_modify_qp (and ibv_query_qp read-back) answered differently from the\n"
    "#     prediction. `qpo validate --provider NAME|FILE` warns (Q308) where a scenario's step\n"
    "#     is refused so; `qpo run` reports a transition refused with its minimal mask as\n"
    "#     unsupported by the device. Regenerate an entry with a probe run, do not edit it.\n"
    "#   wire: what the provider does on the wire that the spec leaves open, each finding with the\n"
    "#     scenario whose capture shows it (qpo run --lab --capture DIR scenarios/wire/...). Written\n"
    "#     from such a run; a probe keeps them.\n"
    "#   completion_flags: a wc_flags bit the provider sets in place of libibverbs' (IBV_WC_X: the\n"
    "#     bit number it sets, and why); qpo reads that bit instead. Written by hand; a probe keeps them.\n";

// YAML double-quoted scalar (a JSON string is one).
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

std::string scalar(const YAML::Node& n, const std::string& where) {
  if (!n || !n.IsScalar()) throw std::runtime_error(where + ": expected a string");
  return n.as<std::string>();
}

uint64_t number(const YAML::Node& n, const std::string& where) {
  try {
    return n.as<uint64_t>();
  } catch (const YAML::Exception&) {
    throw std::runtime_error(where + ": expected a number");
  }
}

ProviderEntry parse_entry(const std::string& name, const YAML::Node& p, const std::string& at) {
  ProviderEntry e;
  e.name = name;
  if (!p.IsMap()) throw std::runtime_error(at + ": expected a map");
  for (const auto& kv : p) {
    std::string key = kv.first.as<std::string>();
    std::string where = at + "." + key;
    if (key == "description") {
      e.description = scalar(kv.second, where);
    } else if (key == "unsupported") {
      for (const auto& u : kv.second)
        e.unsupported[u.first.as<std::string>()] = scalar(u.second, where + "." + u.first.as<std::string>());
    } else if (key == "probed") {
      ProbeRecord r;
      const auto& n = kv.second;
      r.device = scalar(n["device"], where + ".device");
      r.kernel = scalar(n["kernel"], where + ".kernel");
      r.date = scalar(n["date"], where + ".date");
      r.cases = number(n["cases"], where + ".cases");
      r.agreed = number(n["agreed"], where + ".agreed");
      for (const auto& np : n["not_probed"])
        r.not_probed[np.first.as<std::string>()] = scalar(np.second, where + ".not_probed");
      e.probed = r;
    } else if (key == "wire") {
      size_t i = 0;
      for (const auto& w : kv.second) {
        std::string at_w = where + "[" + std::to_string(i++) + "]";
        e.wire.push_back({scalar(w["topic"], at_w + ".topic"), scalar(w["finding"], at_w + ".finding"),
                          scalar(w["scenario"], at_w + ".scenario")});
      }
    } else if (key == "completion_flags") {
      if (!kv.second.IsMap()) throw std::runtime_error(where + ": expected a map of IBV_WC_* flags");
      for (const auto& f : kv.second) {
        std::string flag = f.first.as<std::string>();
        std::string at_f = where + "." + flag;
        if (flag.rfind("IBV_WC_", 0) != 0) throw std::runtime_error(at_f + ": not an IBV_WC_* flag");
        uint64_t bit = number(f.second["bit"], at_f + ".bit");
        if (bit > 31) throw std::runtime_error(at_f + ".bit: " + std::to_string(bit) + " is not a bit of wc_flags (0..31)");
        e.completion_flags[flag] = {static_cast<unsigned>(bit), scalar(f.second["why"], at_f + ".why")};
      }
    } else if (key == "deviations") {
      size_t i = 0;
      for (const auto& d : kv.second) {
        std::string w = where + "[" + std::to_string(i++) + "]";
        Deviation dev;
        dev.what = scalar(d["case"], w + ".case");
        if (!ProbeCaseKey::parse(dev.what))
          throw std::runtime_error(w + ".case: '" + dev.what +
                                   "' is none of: minimal mask, invalid transition, with IBV_QP_X, "
                                   "without IBV_QP_X, field = value");
        dev.predicted = scalar(d["predicted"], w + ".predicted");
        dev.answered = scalar(d["answered"], w + ".answered");
        if (!d["in"] || !d["in"].IsSequence()) throw std::runtime_error(w + ".in: expected a list of transitions");
        for (const auto& c : d["in"]) dev.in.push_back(scalar(c, w + ".in"));
        e.deviations.push_back(std::move(dev));
      }
    } else {
      throw std::runtime_error(where + ": unknown key (known: description, unsupported, probed, deviations, wire, completion_flags)");
    }
  }
  return e;
}

}  // namespace

std::string ProbeCaseKey::text() const {
  switch (kind) {
    case Kind::Minimal: return "minimal mask";
    case Kind::Invalid: return "invalid transition";
    case Kind::Without: return "without " + attr;
    case Kind::With: return "with " + attr;
    case Kind::Value: return attr + " = " + std::to_string(value);
  }
  return "";
}

std::optional<ProbeCaseKey> ProbeCaseKey::parse(std::string_view text) {
  ProbeCaseKey k;
  if (text == "minimal mask") return k;
  if (text == "invalid transition") {
    k.kind = Kind::Invalid;
    return k;
  }
  auto word = [&](std::string_view prefix, Kind kind) -> bool {
    if (text.substr(0, prefix.size()) != prefix || text.size() == prefix.size()) return false;
    k.kind = kind;
    k.attr = std::string(text.substr(prefix.size()));
    return true;
  };
  if (word("without ", Kind::Without) || word("with ", Kind::With)) return k;
  auto eq = text.find(" = ");
  if (eq == std::string_view::npos || eq == 0) return std::nullopt;
  std::string digits(text.substr(eq + 3));
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 19)
    return std::nullopt;
  k.kind = Kind::Value;
  k.attr = std::string(text.substr(0, eq));
  k.value = std::stoull(digits);
  return k;
}

std::string cell_text(const std::string& type, QpState from, QpState to) {
  return type + " " + state_name(from) + "->" + state_name(to);
}

bool deviation_applies(const Deviation& d, const RuleTable& rules, const std::string& cell, Mask mask,
                       const std::optional<uint64_t>& field_value) {
  if (std::find(d.in.begin(), d.in.end(), cell) == d.in.end()) return false;
  auto key = ProbeCaseKey::parse(d.what);
  if (!key) return false;
  switch (key->kind) {
    case ProbeCaseKey::Kind::Minimal: return true;
    case ProbeCaseKey::Kind::Invalid: return true;
    case ProbeCaseKey::Kind::With: {
      auto bit = rules.parse_mask(key->attr, nullptr);
      return bit && (mask & *bit);
    }
    case ProbeCaseKey::Kind::Without: {
      auto bit = rules.parse_mask(key->attr, nullptr);
      return bit && !(mask & *bit);
    }
    case ProbeCaseKey::Kind::Value: return field_value && *field_value == key->value;
  }
  return false;
}

ProviderTable ProviderTable::parse(std::string_view yaml_text, const std::string& origin) {
  ProviderTable t;
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml_text));
  } catch (const YAML::Exception& e) {
    throw std::runtime_error(origin + ": not YAML: " + e.msg + " (line " + std::to_string(e.mark.line + 1) + ")");
  }
  if (!root.IsMap() || !root["providers"] || !root["providers"].IsMap())
    throw std::runtime_error(origin + ": expected a map with a 'providers:' map");
  try {
    for (const auto& p : root["providers"]) {
      std::string name = p.first.as<std::string>();
      t.entries_[name] = parse_entry(name, p.second, origin + ": providers." + name);
    }
  } catch (const YAML::Exception& e) {
    throw std::runtime_error(origin + ": " + e.msg + " (line " + std::to_string(e.mark.line + 1) + ")");
  }
  t.index_transitions();
  return t;
}

const ProviderTable& ProviderTable::builtin() {
  static const ProviderTable table = parse(kBuiltinProvidersYaml, "schemas/providers.yaml");
  return table;
}

void ProviderTable::index_transitions() {
  transitions_.clear();
  for (const auto& [name, e] : entries_)
    for (const auto& d : e.deviations) {
      auto key = ProbeCaseKey::parse(d.what);
      if (!key || key->kind != ProbeCaseKey::Kind::Minimal || !d.refuses_predicted_ok()) continue;
      for (const auto& cell : d.in) {
        // "RC SQD->RTS"
        auto space = cell.find(' '), arrow = cell.find("->");
        if (space == std::string::npos || arrow == std::string::npos || arrow < space) continue;
        std::string why = "qpo probe found " + name + " answers " + d.answered + " to " + cell +
                          " with the minimal mask, which the rule tables allow";
        if (e.probed) why += " (" + e.probed->kernel + ", " + e.probed->date + ")";
        transitions_[name].push_back({cell.substr(0, space), cell.substr(space + 1, arrow - space - 1),
                                      cell.substr(arrow + 2), d.answered, why});
      }
    }
}

const ProviderEntry* ProviderTable::entry(const std::string& provider) const {
  auto it = entries_.find(provider);
  return it == entries_.end() ? nullptr : &it->second;
}

void ProviderTable::merge_probe(const ProviderEntry& e) {
  auto& slot = entries_[e.name];
  slot.name = e.name;
  if (!e.description.empty()) slot.description = e.description;
  for (const auto& [cap, why] : e.unsupported) slot.unsupported[cap] = why;
  slot.probed = e.probed;
  slot.deviations = e.deviations;
  if (!e.wire.empty()) slot.wire = e.wire;
  if (!e.completion_flags.empty()) slot.completion_flags = e.completion_flags;
  index_transitions();
}

std::string ProviderTable::to_yaml() const {
  std::ostringstream o;
  o << kHeader << "providers:\n";
  for (const auto& [name, e] : entries_) {
    o << "  " << name << ":\n";
    if (!e.description.empty()) o << "    description: " << quoted(e.description) << "\n";
    if (!e.unsupported.empty()) {
      o << "    unsupported:\n";
      for (const auto& [cap, why] : e.unsupported) o << "      " << cap << ": " << quoted(why) << "\n";
    }
    if (e.probed) {
      const auto& r = *e.probed;
      o << "    probed:\n"
        << "      device: " << quoted(r.device) << "\n"
        << "      kernel: " << quoted(r.kernel) << "\n"
        << "      date: " << quoted(r.date) << "\n"
        << "      cases: " << r.cases << "\n"
        << "      agreed: " << r.agreed << "\n";
      if (!r.not_probed.empty()) {
        o << "      not_probed:\n";
        for (const auto& [type, why] : r.not_probed) o << "        " << type << ": " << quoted(why) << "\n";
      }
    }
    if (!e.wire.empty()) {
      o << "    wire:\n";
      for (const auto& w : e.wire)
        o << "      - topic: " << quoted(w.topic) << "\n"
          << "        finding: " << quoted(w.finding) << "\n"
          << "        scenario: " << quoted(w.scenario) << "\n";
    }
    if (!e.completion_flags.empty()) {
      o << "    completion_flags:\n";
      for (const auto& [flag, f] : e.completion_flags)
        o << "      " << flag << ": { bit: " << f.bit << ", why: " << quoted(f.why) << " }\n";
    }
    if (!e.deviations.empty()) {
      o << "    deviations:\n";
      for (const auto& d : e.deviations) {
        o << "      - case: " << quoted(d.what) << "\n"
          << "        predicted: " << quoted(d.predicted) << "\n"
          << "        answered: " << quoted(d.answered) << "\n"
          << "        in:\n";
        for (const auto& c : d.in) o << "          - " << quoted(c) << "\n";
      }
    }
  }
  return o.str();
}

uint32_t ProviderTable::completion_flag(const std::string& provider, const std::string& flag, uint32_t standard) const {
  const auto* e = entry(provider);
  if (!e) return standard;
  auto f = e->completion_flags.find(flag);
  return f == e->completion_flags.end() ? standard : 1u << f->second.bit;
}

std::optional<std::string> ProviderTable::lacks(const std::string& provider, const std::string& capability) const {
  const auto* e = entry(provider);
  if (!e) return std::nullopt;
  auto c = e->unsupported.find(capability);
  if (c == e->unsupported.end()) return std::nullopt;
  return c->second;
}

const ProviderTable::TransitionDeviation* ProviderTable::transition_deviation(const std::string& provider,
                                                                             const std::string& type,
                                                                             const std::string& from,
                                                                             const std::string& to) const {
  auto p = transitions_.find(provider);
  if (p == transitions_.end()) return nullptr;
  for (const auto& d : p->second)
    if (d.type == type && d.from == from && d.to == to) return &d;
  return nullptr;
}

}  // namespace qpo::spec
