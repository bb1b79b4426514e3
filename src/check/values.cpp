// Attribute values against the ranges in schemas/verbs-rules.yaml, and ibv_reg_mr access rules.
// enforced_by (of the bound the value is past): kernel, provider -> error; device -> error when
// outside what any device can accept; field, none, lint -> warning (the kernel accepts it:
// stored, truncated, or a mistake). The diagnostic's rule names who rejects it or what happens.
#include "check/validate.h"
#include "util/strings.h"
#include "util/wc_status_names.h"

namespace qpo::check {

namespace {

void check_attr(const scenario::Attr& a, const spec::ValueRule& rule, diag::DiagSink& sink) {
  if (!a.valid || a.symbol != scenario::Symbol::None || a.from_default) return;
  if (rule.has_range && (a.number < rule.min || a.number > rule.max)) {
    auto bound = spec::bound_of(rule, a.number);
    bool accepted = spec::accepted_by_kernel(rule, bound);
    auto& d = accepted ? sink.warning("Q401", a.loc, a.path, "") : sink.error("Q401", a.loc, a.path, "");
    d.message = a.field + " = " + a.text + " is outside " + std::to_string(rule.min) + ".." + std::to_string(rule.max);
    std::string which;  // a rule whose bounds differ says which one the value is past
    if (spec::per_bound(rule))
      which = bound == spec::Bound::Below ? "below " + std::to_string(rule.min) + ": " : "above " + std::to_string(rule.max) + ": ";
    d.rule = "value range of " + a.field + " (" + which + spec::enforcer_text(rule, bound) + ")";
    if (!rule.note.empty()) d.rule += "; " + rule.note;
    if (rule.enum_name == "mtu") d.hint = "use IBV_MTU_256..IBV_MTU_4096, or 256, 512, 1024, 2048, 4096";
    else if (rule.field == "sq_psn" || rule.field == "rq_psn") d.hint = "PSNs are 24 bits: at most 0xFFFFFF";
    else d.hint = "use a value in " + std::to_string(rule.min) + ".." + std::to_string(rule.max);
  }
  if (rule.type == "flags" && a.field == "qp_access_flags") {
    // Only the remote-access bits (and MW bind) mean anything on a QP.
    const uint64_t qp_bits = 0x2 | 0x4 | 0x8 | 0x10;
    if (a.number & ~qp_bits) {
      auto& d = sink.warning("Q403", a.loc, a.path, "qp_access_flags has bits that only mean something on an MR");
      d.rule = "ibv_modify_qp(3): qp_access_flags takes IBV_ACCESS_REMOTE_{WRITE,READ,ATOMIC}";
      d.hint = "keep remote_write, remote_read, remote_atomic";
    }
  }
  for (const auto& c : a.children) {
    const spec::ValueRule* cr = nullptr;
    if (auto it = spec::RuleTable::builtin().ah_fields().find(c.field); it != spec::RuleTable::builtin().ah_fields().end() && a.field != "grh") cr = &it->second;
    if (auto it = spec::RuleTable::builtin().grh_fields().find(c.field); it != spec::RuleTable::builtin().grh_fields().end() && a.field == "grh") cr = &it->second;
    if (cr) {
      spec::ValueRule r = *cr;
      if (r.above_by.empty()) r.below_by = r.above_by = "kernel";
      check_attr(c, r, sink);
    } else if (c.field == "grh") {
      check_attr(c, spec::ValueRule{}, sink);
    }
  }
}

// The run compares the status it polled, by name, with the one a workload expects: a name
// outside the table, or the short spelling, would never match and fail a correct run.
void check_expected_status(const scenario::Workload& w, diag::DiagSink& sink) {
  if (!w.expect_status) return;
  const std::string& name = *w.expect_status;
  auto status = util::parse_wc_status(name);
  if (status && name == util::wc_status_name(*status)) return;
  auto& d = sink.error("Q106", w.expect_loc, "workloads." + w.name + ".expect.status",
                       "'" + name + "' is not a work completion status");
  d.rule = "a workload expects a completion status as <infiniband/verbs.h> spells it";
  if (status) {
    d.hint = "write " + std::string(util::wc_status_name(*status));
    return;
  }
  auto guess = util::did_you_mean(name, util::wc_status_names());
  d.hint = guess.empty() ? "known: " + util::join(util::wc_status_names(), ", ") : "did you mean '" + guess + "'?";
}

}  // namespace

void check_values(const scenario::Scenario& s, diag::DiagSink& sink) {
  for (const auto& q : s.qps)
    for (const auto& t : q.transitions)
      for (const auto& a : t.attrs)
        if (const auto* rule = spec::RuleTable::builtin().value_rule(a.field)) check_attr(a, *rule, sink);

  for (const auto& m : s.mrs) {
    for (const auto& r : spec::RuleTable::builtin().mr_access_rules()) {
      const auto* names = spec::RuleTable::builtin().enum_values("access");
      auto bit = [&](const std::string& name) -> uint32_t {
        for (const auto& [n, v] : *names)
          if (n == name) return static_cast<uint32_t>(v);
        return 0;
      };
      uint32_t any = 0;
      for (const auto& n : r.if_any) any |= bit(n);
      if ((m.access & any) && !(m.access & bit(r.need))) {
        auto& d = sink.error("Q402", m.access_loc, "mrs." + m.name + ".access",
                             "MR '" + m.name + "' asks for remote write or remote atomic access without local_write");
        d.rule = "ibv_reg_mr(3): REMOTE_WRITE or REMOTE_ATOMIC requires LOCAL_WRITE (the kernel returns EINVAL)";
        d.hint = "add local_write to access";
      }
    }
    if (m.size == 0) {
      auto& d = sink.warning("Q404", m.loc, "mrs." + m.name + ".size", "MR '" + m.name + "' has size 0");
      d.hint = "zero-length MRs register but cannot carry data";
    }
  }
  for (const auto& c : s.cqs)
    if (c.depth == 0) {
      auto& d = sink.error("Q401", c.depth_loc.given() ? c.depth_loc : c.loc, "cqs." + c.name + ".depth",
                           "CQ depth must be at least 1");
      d.rule = "ibv_create_cq(3): cqe is the least number of entries the CQ holds (rxe refuses 0 with EINVAL)";
      d.hint = "size it for the work requests its QPs can have outstanding (Q601 says how many)";
    }
  for (const auto& w : s.workloads) {
    check_expected_status(w, sink);
    if (w.script.empty() && w.iterations == 0) {  // a script's iterations are its args' (its setup judges them)
      auto& d = sink.error("Q405", w.iterations_loc.given() ? w.iterations_loc : w.loc,
                           "workloads." + w.name + ".iterations",
                           "workload '" + w.name + "' has iterations: 0: its stream refuses to start and the run fails");
      d.rule = "an op workload's stream sends at least one message (perftest refuses -n 0 too)";
      d.hint = "give it at least 1";
    }
  }
}

}  // namespace qpo::check
