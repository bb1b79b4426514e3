// One QP's modify calls replayed against the kernel's qp_state_table: fills in defaults for
// required attributes, computes the attr_mask qpo will pass, and reports what
// ib_modify_qp_is_ok() would reject - unless the scenario expects exactly that failure.
#include "check/state_follower.h"

#include <cerrno>

#include "util/strings.h"

namespace qpo::check {

using scenario::Attr;
using scenario::Symbol;
using spec::Mask;
using spec::QpState;

namespace {

const spec::RuleTable& rules() { return spec::RuleTable::builtin(); }

std::string transition_name(const scenario::Qp& q, QpState from, QpState to) {
  return q.type_name + " " + spec::state_name(from) + "->" + spec::state_name(to);
}

Symbol symbol_of(std::string_view text) {
  if (text == "peer") return Symbol::Peer;
  if (text == "auto") return Symbol::Auto;
  if (text == "random") return Symbol::Random;
  if (text == "device") return Symbol::Device;
  return Symbol::None;
}

// An Attr holding a rule's default; nullopt when the rule has none.
std::optional<Attr> default_attr(const spec::ValueRule& rule, const std::string& path, const scenario::SourceLoc& loc) {
  if (rule.default_text.empty()) return std::nullopt;
  Attr a;
  a.field = rule.field;
  a.path = path;
  a.loc = loc;
  a.key_loc = loc;
  a.text = rule.default_text;
  a.from_default = true;
  a.symbol = symbol_of(rule.default_text);
  if (a.symbol == Symbol::None) {
    if (rule.default_text == "[]") a.number = 0;
    else if (auto n = util::parse_uint(rule.default_text)) a.number = *n;
    else if (rule.default_text == "true") a.number = 1;
    else if (rule.default_text == "false") a.number = 0;
  }
  return a;
}

// ah_attr's own fields and its grh get their defaults too, so `plan` shows every value.
void fill_ah_defaults(Attr& ah) {
  if (ah.symbol != Symbol::None || !ah.valid) return;
  for (const auto& [name, rule] : rules().ah_fields())
    if (!ah.child(name))
      if (auto d = default_attr(rule, ah.path + "." + name, ah.loc)) ah.children.push_back(*d);
  const Attr* global = ah.child("is_global");
  if (global && global->number == 0) return;
  Attr* grh = nullptr;
  for (auto& c : ah.children)
    if (c.field == "grh") grh = &c;
  if (!grh) {
    Attr g;
    g.field = "grh";
    g.path = ah.path + ".grh";
    g.loc = ah.loc;
    g.from_default = true;
    ah.children.push_back(g);
    grh = &ah.children.back();
  }
  for (const auto& [name, rule] : rules().grh_fields())
    if (!grh->child(name))
      if (auto d = default_attr(rule, grh->path + "." + name, grh->loc)) grh->children.push_back(*d);
}

bool uses_peer(const Attr& a) {
  if (a.symbol == Symbol::Peer) return true;
  for (const auto& c : a.children)
    if (uses_peer(c)) return true;
  return false;
}

}  // namespace

QpState StateFollower::apply(scenario::Transition& t) {
  state_ = check(t);
  return state_;
}

QpState StateFollower::check(scenario::Transition& t) {
  const auto& q = qp_;
  QpState cur = state_;
  t.from = cur;
  const auto& cell = rules().cell(cur, t.to);
  if (cell.valid && t.use_defaults) {
    if (!t.bring_up) inherit_own_states(t);
    fill_defaults(t, rules().required(q.type, cur, t.to));
  }
  for (auto& a : t.attrs)
    if (a.field == "ah_attr" || a.field == "alt_ah_attr") fill_ah_defaults(a);
  Mask mask = 1u << 0;  // IBV_QP_STATE: qpo always names the target state
  for (const auto& a : t.attrs)
    if (const auto* info = rules().attr_by_field(a.field)) mask |= info->mask();
  t.mask = mask;
  // What ibv_modify_qp answers a user-space caller: uverbs drops these bits first (XRC).
  if (Mask ignored = mask & rules().user_space_ignores(q.type)) {
    const scenario::Attr* first = nullptr;
    for (const auto& a : t.attrs)
      if (const auto* info = rules().attr_by_field(a.field); info && (info->mask() & ignored) && !first) first = &a;
    auto& d = sink_.warning("Q307", first ? first->loc : t.loc, first ? first->path : t.path,
                            transition_name(q, cur, t.to) + ": " + rules().mask_names(ignored) +
                                " is ignored: uverbs removes it from a user-space call's mask for " +
                                rules().types()[static_cast<size_t>(q.type)].name + " QPs");
    d.rule = "drivers/infiniband/core/uverbs_cmd.c modify_qp_mask() (schemas/verbs-rules.yaml user_space_ignores)";
    d.hint = "drop " + rules().mask_fields(ignored) + ": the call succeeds and the value is not used";
    mask &= ~ignored;
  }
  t.verdict = rules().check(q.type, cur, t.to, mask);
  t.predicted_ok = t.verdict.ok;
  report_peer_without_connect(t);

  bool expects_failure = t.expect && t.expect->errno_value != 0;
  if (t.verdict.ok) {
    if (expects_failure && t.expect->errno_value == EINVAL) {
      auto& d = sink_.warning("Q305", t.expect->loc, t.path + ".expect",
                              "expected EINVAL, but the rule tables predict " + transition_name(q, cur, t.to) +
                                  " with " + rules().mask_names(mask) + " succeeds");
      d.rule = "kernel qp_state_table (" + rules().source() + ")";
      d.hint = "the kernel's generic check passes; a provider may still refuse it, or the expectation is wrong";
    }
    return t.to;
  }
  if (expects_failure && t.expect->errno_value == EINVAL) return cur;  // predicted and expected
  if (expects_failure && t.expect->errno_value < 0) return cur;  // an errno the loader could not read (its Q106)
  report(t);
  return t.to;
}

// A recovery path re-enters a bring-up state (RESET->INIT, INIT->RTR, RTR->RTS) with the
// QP's own `states:` attributes for it, unless the step writes them itself: a bare `- INIT`
// after RESET keeps the QP's qp_access_flags instead of the type's default 0.
void StateFollower::inherit_own_states(scenario::Transition& t) {
  const scenario::Transition* own = nullptr;
  for (const auto& b : qp_.transitions)
    if (b.bring_up && b.to == t.to && b.from == state_ && b.predicted_ok && !(b.expect && b.expect->errno_value)) own = &b;
  if (!own) return;
  for (const auto& a : own->attrs)
    if (!t.attr(a.field)) t.attrs.push_back(a);
}

void StateFollower::report_peer_without_connect(const scenario::Transition& t) {
  for (const auto& a : t.attrs)
    if (uses_peer(a) && !qp_.connect) {
      auto& d = sink_.error("Q502", a.from_default ? t.loc : a.loc, a.path,
                            a.field + " is 'peer', but QP '" + qp_.name + "' has no 'connect:'");
      d.rule = "'peer' values come from the connected QP after the out-of-band exchange";
      d.hint = a.from_default ? "give " + a.field + " explicitly, or add 'connect: <peer QP>'"
                              : "add 'connect: <peer QP>' or give a literal value";
    }
}

void StateFollower::fill_defaults(scenario::Transition& t, Mask required) {
  for (const auto& attr : rules().attributes()) {
    if (!(required & attr.mask())) continue;
    bool present = false;
    for (const auto& f : attr.fields)
      if (t.attr(f)) present = true;
    if (present) continue;
    const auto* rule = rules().value_rule(attr.fields[0]);
    if (!rule) continue;
    auto d = default_attr(*rule, t.path + "." + attr.fields[0], t.loc);
    if (!d) continue;
    // A default that needs the peer is only a default when there is a peer.
    if (d->symbol == Symbol::Peer && !qp_.connect) continue;
    t.attrs.push_back(*d);
  }
}

void StateFollower::report(const scenario::Transition& t) {
  const auto& q = qp_;
  QpState cur = state_;
  const auto& v = t.verdict;
  std::string name = transition_name(q, cur, t.to);
  std::string rule = "kernel qp_state_table (" + rules().source() + ")";
  if (v.cur_state_illegal) {
    auto& d = sink_.error("Q304", t.attr("cur_qp_state") ? t.attr("cur_qp_state")->key_loc : t.loc, t.path,
                          "cur_qp_state (IBV_QP_CUR_STATE) is only accepted from RTR, RTS, SQD or SQE, not " +
                              std::string(spec::state_name(cur)));
    d.rule = rule;
  }
  if (v.invalid_transition) {
    std::vector<std::string> targets;
    for (int i = 0; i < spec::kStateCount; ++i)
      if (rules().cell(cur, static_cast<QpState>(i)).valid) targets.emplace_back(spec::state_name(static_cast<QpState>(i)));
    auto& d = sink_.error("Q301", t.loc, t.path, name + " is not a valid transition");
    d.rule = rule;
    d.hint = std::string("from ") + spec::state_name(cur) + " a QP can go to: " + util::join(targets, ", ");
    if (!t.bring_up && cur != QpState::RESET && t.to == QpState::INIT) d.hint += " (go through RESET first)";
    return;
  }
  for (const auto& attr : rules().attributes()) {
    if (!(v.missing & attr.mask())) continue;
    const auto* vr = rules().value_rule(attr.fields[0]);
    std::string def = vr ? vr->default_text : "";
    auto& d = sink_.error("Q302", t.loc, t.path,
                          name + " requires " + attr.fields[0] + " (" + attr.mask_name + ")");
    d.rule = rule;
    if (def.empty()) d.hint = "add " + attr.fields[0];
    else if (def == "peer" && q.connect)  // connected: only `defaults: false` kept the peer's value out
      d.hint = "add it, or drop 'defaults: false' so qpo takes it from the peer";
    else if (def == "peer") d.hint = "add " + attr.fields[0] + ", or add 'connect:' so qpo takes it from the peer";
    else if (!t.use_defaults) d.hint = "add it, or drop 'defaults: false' to rely on the default " + def;
    else d.hint = "add it or rely on the default " + def;
  }
  if (v.forbidden) {
    Mask allowed = rules().required(q.type, cur, t.to) | rules().optional(q.type, cur, t.to);
    std::string allowed_text = allowed ? rules().mask_fields(allowed) : "none besides the state";
    for (const auto& a : t.attrs) {
      const auto* info = rules().attr_by_field(a.field);
      if (!info || !(v.forbidden & info->mask())) continue;
      auto& d = sink_.error("Q303", a.from_default ? t.loc : a.key_loc, a.path,
                            name + " does not accept " + a.field + " (" + info->mask_name +
                                "); the kernel returns EINVAL");
      d.rule = rule;
      d.hint = "remove it; allowed here: " + allowed_text;
      if (t.expect && t.expect->errno_value != 0)
        d.hint += " (this transition expects " + t.expect->errno_name + ", but the kernel returns EINVAL)";
    }
  }
}

}  // namespace qpo::check
