// qpo rules show | check: the kernel's QP state table as a learning and debugging tool.
#include <cstdio>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/rules_check.h"
#include "spec/rules.h"
#include "util/json_writer.h"
#include "util/strings.h"

namespace qpo::cli {

namespace {

struct ShowOptions {
  std::string type, from, to;
  bool values = false;
  bool in_kernel = false;  // rules check --in-kernel
  OutputOptions out;
};

std::string attr_list(const spec::RuleTable& rules, spec::Mask m) {
  if (!m) return "-";
  std::vector<std::string> parts;
  for (const auto& a : rules.attributes())
    if (m & a.mask()) parts.push_back(a.mask_name + " (" + util::join(a.fields, ", ") + ")");
  return util::join(parts, "\n              ");
}

int show(const ShowOptions& o) {
  const auto& rules = spec::RuleTable::builtin();
  std::vector<int> types;
  if (!o.type.empty()) {
    int t = rules.type_index(o.type);
    if (t < 0) {
      std::cerr << "qpo rules show: unknown QP type '" << util::printable(o.type, 200) << "'; types: " << util::join(rules.type_names(), ", ")
                << "\n";
      return kSystemError;
    }
    types.push_back(t);
  } else {
    for (size_t i = 0; i < rules.types().size(); ++i) types.push_back(static_cast<int>(i));
  }
  std::optional<spec::QpState> from, to;
  if (!o.from.empty() && !(from = spec::parse_state(o.from))) {
    std::cerr << "qpo rules show: unknown state '" << util::printable(o.from, 200) << "'\n";
    return kSystemError;
  }
  if (!o.to.empty() && !(to = spec::parse_state(o.to))) {
    std::cerr << "qpo rules show: unknown state '" << util::printable(o.to, 200) << "'\n";
    return kSystemError;
  }
  bool json = o.out.format == "json";
  util::JsonWriter w;
  std::string text;
  if (json) w.begin_object().field("source", rules.source()).key("transitions").begin_array();
  else text = "source: " + rules.source() + "\n";
  int shown = 0;
  for (int t : types) {
    for (int a = 0; a < spec::kStateCount; ++a) {
      for (int b = 0; b < spec::kStateCount; ++b) {
        auto sa = static_cast<spec::QpState>(a), sb = static_cast<spec::QpState>(b);
        if ((from && *from != sa) || (to && *to != sb)) continue;
        const auto& cell = rules.cell(sa, sb);
        if (!cell.valid) {
          if (from && to) {
            if (json) {
              w.begin_object().field("type", rules.types()[t].name).field("from", spec::state_name(sa));
              w.field("to", spec::state_name(sb)).field("valid", false).end_object();
            } else {
              text += "\n" + rules.types()[t].name + "  " + spec::state_name(sa) + " -> " + spec::state_name(sb) +
                      ": not a valid transition (ibv_modify_qp returns EINVAL)\n";
            }
            ++shown;
          }
          continue;
        }
        spec::Mask req = rules.required(t, sa, sb), opt = rules.optional(t, sa, sb);
        ++shown;
        if (json) {
          w.begin_object().field("type", rules.types()[t].name).field("from", spec::state_name(sa));
          w.field("to", spec::state_name(sb)).field("valid", true);
          w.key("required").begin_array();
          for (const auto& at : rules.attributes())
            if (req & at.mask()) w.value(at.mask_name);
          w.end_array().key("optional").begin_array();
          for (const auto& at : rules.attributes())
            if (opt & at.mask()) w.value(at.mask_name);
          w.end_array().end_object();
          continue;
        }
        text += "\n" + rules.types()[t].name + "  " + spec::state_name(sa) + " -> " + spec::state_name(sb) + "\n";
        text += "  required:   IBV_QP_STATE (always)" + std::string(req ? "\n              " + attr_list(rules, req) : "") + "\n";
        text += "  optional:   " + attr_list(rules, opt) + "\n";
      }
    }
  }
  if (json) {
    w.end_array();
    if (o.values) {
      w.key("values").begin_object();
      for (const auto& [name, r] : rules.value_rules()) {
        w.key(name).begin_object().field("type", r.type);
        if (spec::per_bound(r))
          w.key("enforced_by").begin_object().field("below", r.below_by).field("above", r.above_by).end_object();
        else
          w.field("enforced_by", r.above_by);
        if (!r.providers.empty()) {
          w.key("providers").begin_array();
          for (const auto& p : r.providers) w.value(p);
          w.end_array();
        }
        if (r.has_range) w.field("beyond_range", spec::enforcer_text(r));
        if (r.has_range) w.field("min", r.min).field("max", r.max);
        if (!r.device_cap.empty()) w.field("device_cap", r.device_cap);
        if (!r.default_text.empty()) w.field("default", r.default_text);
        w.end_object();
      }
      w.end_object();
    }
    w.end_object();
    std::cout << w.str() << "\n";
  } else {
    if (o.values) {
      text += "\nvalue rules (past the range: kernel/provider = EINVAL; field = the kernel accepts it, the provider stores or "
              "truncates it; none = nothing rejects it, the provider stores it as is; device = caps; lint = qpo's warning; "
              "a rule whose bounds differ names each)\n";
      for (const auto& [name, r] : rules.value_rules()) {
        text += "  " + name + ": " + r.type;
        if (r.has_range) text += " " + std::to_string(r.min) + ".." + std::to_string(r.max);
        if (!r.default_text.empty()) text += ", default " + r.default_text;
        if (r.has_range) text += "; past it: " + spec::enforcer_text(r);
        if (!r.device_cap.empty()) text += "; at most the device's " + r.device_cap;
        if (!r.note.empty()) text += " (" + r.note + ")";
        text += "\n";
      }
    }
    std::cout << text;
  }
  if (shown == 0) {
    std::cerr << "qpo rules show: no transition matches\n";
    return kInvalid;
  }
  return kOk;
}

}  // namespace

Action add_rules(CLI::App& app) {
  auto* cmd = app.add_subcommand("rules", "The verbs QP state table (Linux 6.1 qp_state_table) as data: show or check");
  cmd->require_subcommand(1);
  auto opts = std::make_shared<ShowOptions>();
  auto* show_cmd = cmd->add_subcommand("show", "Print required/optional attributes per QP type and transition");
  show_cmd->add_option("--type", opts->type, "QP type: RC UC UD XRC_SEND XRC_RECV RAW_PACKET (SMI GSI)");
  show_cmd->add_option("--from", opts->from, "Current state: RESET INIT RTR RTS SQD SQE ERR");
  show_cmd->add_option("--to", opts->to, "Next state");
  show_cmd->add_flag("--values", opts->values, "Also print value ranges, defaults and who enforces them");
  add_output_options(*show_cmd, opts->out);
  show_cmd->footer("Example:\n  qpo rules show --type RC --from INIT --to RTR\n  qpo rules show --type UD --values");

  auto* check_cmd = cmd->add_subcommand("check", "Read '<qp_type> <cur> <next> <attr_mask>' lines on stdin, print verdicts");
  check_cmd->add_flag("--in-kernel", opts->in_kernel,
                      "The state table's verdict for an in-kernel caller (no uverbs mask filtering for XRC)");
  check_cmd->footer(
      "One verdict line per input line: 'ok', or 'EINVAL' with the missing/forbidden attributes,\n"
      "as ibv_modify_qp answers a user-space caller: ib_modify_qp_is_ok() in the kernel, after\n"
      "uverbs removed the bits it ignores for XRC QPs (said after 'ok'; --in-kernel: the state\n"
      "table's own verdict, as for an in-kernel caller). The mask is hex/decimal or IBV_QP_*\n"
      "names joined by '|' (the IBV_QP_ prefix is optional). Blank lines and # comments are skipped.\n"
      "Exit status 1 if any line was malformed.\n\n"
      "Example:\n"
      "  echo 'RC INIT RTR IBV_QP_STATE|IBV_QP_AV|IBV_QP_PATH_MTU' | qpo rules check\n"
      "  EINVAL missing: IBV_QP_RQ_PSN|IBV_QP_MAX_DEST_RD_ATOMIC|IBV_QP_MIN_RNR_TIMER|IBV_QP_DEST_QPN");
  return [cmd, show_cmd, check_cmd, opts]() {
    if (cmd->got_subcommand(show_cmd)) return show(*opts);
    if (cmd->got_subcommand(check_cmd)) {
      size_t bad = run_rules_check(stdin, stdout, opts->in_kernel);
      if (bad) std::fprintf(stderr, "qpo rules check: %zu malformed line(s)\n", bad);
      return bad ? static_cast<int>(kInvalid) : static_cast<int>(kOk);
    }
    return static_cast<int>(kSystemError);
  };
}

}  // namespace qpo::cli
