// Spelling of attribute values in plans, as an engineer would write them in C.
#include "plan/plan.h"
#include "util/strings.h"

namespace qpo::plan {

namespace {

const spec::RuleTable& rules() { return spec::RuleTable::builtin(); }

std::string enum_text(const std::string& enum_name, uint64_t v) {
  if (const auto* values = rules().enum_values(enum_name))
    for (const auto& [name, value] : *values)
      if (value == v) return name;
  return std::to_string(v);
}

std::string flags_text(uint64_t v) {
  if (v == 0) return "0";
  std::vector<std::string> names;
  for (const auto& [name, value] : *rules().enum_values("access"))
    if (v & value) names.push_back(name);
  return util::join(names, " | ");
}

std::string runtime_note(const scenario::Attr& a) {
  switch (a.symbol) {
    case scenario::Symbol::Peer:
      if (a.field == "dest_qp_num") return "peer QPN, known after exchange";
      if (a.field == "rq_psn") return "peer's sq_psn, known after exchange";
      if (a.field == "dgid") return "peer GID, known after exchange";
      if (a.field == "dlid") return "peer LID, known after exchange";
      return "from the peer, known after exchange";
    case scenario::Symbol::Auto:
      if (a.field == "path_mtu") return "min of both ports' active_mtu, known after exchange";
      if (a.field == "sgid_index") return "RoCEv2 IPv4-mapped GID if present, chosen at run time";
      return "chosen at run time";
    case scenario::Symbol::Random: return "random 24-bit, chosen at run time";
    case scenario::Symbol::Device: return "the device's configured port";
    case scenario::Symbol::None: break;
  }
  return "";
}

}  // namespace

Arg describe_attr(const scenario::Attr& a, const std::string& prefix) {
  Arg arg;
  arg.name = prefix + a.field;
  arg.from_default = a.from_default;
  if (a.symbol != scenario::Symbol::None) {
    arg.value = scenario::symbol_name(a.symbol);
    arg.runtime = true;
    arg.note = runtime_note(a);
    return arg;
  }
  const auto* rule = rules().value_rule(a.field);
  if (rule && rule->type == "enum") arg.value = enum_text(rule->enum_name, a.number);
  else if (rule && rule->type == "flags") arg.value = flags_text(a.number);
  else if (a.field == "qkey" || a.field == "sq_psn" || a.field == "rq_psn" || a.field == "flow_label")
    arg.value = util::hex(a.number);
  else if (a.field == "dgid") arg.value = a.text;
  else if (a.field == "is_global") arg.value = a.number ? "1" : "0";
  else arg.value = std::to_string(a.number);
  return arg;
}

std::vector<Arg> describe_attr_tree(const scenario::Attr& a) {
  std::vector<Arg> out;
  if (a.children.empty() || a.symbol != scenario::Symbol::None) {
    out.push_back(describe_attr(a));
    return out;
  }
  for (const auto& c : a.children) {
    if (c.field == "grh") {
      for (const auto& g : c.children) out.push_back(describe_attr(g, a.field + ".grh."));
      continue;
    }
    out.push_back(describe_attr(c, a.field + "."));
  }
  return out;
}

}  // namespace qpo::plan
