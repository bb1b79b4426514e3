// Loading of `qps:`: QP objects, their bring-up path (`states:`) and extra transitions
// (`transitions:`), with every ibv_qp_attr value parsed per the rule tables' value types.
#include <arpa/inet.h>

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>
#include <utility>

#include "scenario/keys.h"
#include "scenario/loader_internal.h"
#include "spec/rules.h"
#include "util/strings.h"

namespace qpo::scenario::detail {

namespace {

const spec::RuleTable& rules() { return spec::RuleTable::builtin(); }

Symbol parse_symbol(std::string_view s) {
  if (s == "peer") return Symbol::Peer;
  if (s == "auto") return Symbol::Auto;
  if (s == "random") return Symbol::Random;
  if (s == "device") return Symbol::Device;
  return Symbol::None;
}

class AttrParser {
 public:
  explicit AttrParser(YamlReader& r) : r_(r) {}

  Attr parse(const std::string& field, const spec::ValueRule& rule, const yaml::Node& key, const yaml::Node& value,
             const std::string& path) {
    Attr a;
    a.field = field;
    a.key_loc = r_.loc(key);
    a.loc = r_.loc(value);
    a.path = path;
    a.text = value.IsScalar() ? value.Scalar() : (value.IsSequence() ? "[...]" : "{...}");
    if (value.IsScalar()) {
      Symbol sym = parse_symbol(value.Scalar());
      if (sym != Symbol::None) {
        if (rule.default_text == value.Scalar()) {
          a.symbol = sym;
          return a;
        }
        auto& d = r_.sink().error("Q106", a.loc, path, field + " cannot be '" + value.Scalar() + "'");
        d.rule = "symbolic values: each field accepts only the one it can resolve";
        d.hint = rule.default_text.empty() || rule.default_text.find_first_of("0123456789[") == 0
                     ? "give a number"
                     : "'" + rule.default_text + "' is the symbolic value " + field + " accepts";
        a.valid = false;
        return a;
      }
    }
    if (rule.type == "uint") {
      auto v = r_.uint(value, path);
      if (v) a.number = *v;
      else a.valid = false;
    } else if (rule.type == "bool") {
      auto v = r_.boolean(value, path);
      if (v) a.number = *v ? 1 : 0;
      else a.valid = false;
    } else if (rule.type == "enum") {
      parse_enum(a, rule, value, path);
    } else if (rule.type == "flags") {
      auto v = parse_access(r_, value, path);
      if (v) a.number = *v;
      else a.valid = false;
    } else if (rule.type == "ah") {
      parse_ah(a, value, path);
    } else if (rule.type == "gid") {
      parse_gid(a, value, path);
    } else if (rule.type == "cap") {
      for (auto& [k, v] : r_.entries(value, path, &keys::cap(), "cap")) {
        Attr c;
        c.field = k;
        c.loc = r_.loc(v);
        c.path = join_path(path, k);
        if (auto n = r_.uint(v, c.path, 0xFFFFFFFF)) c.number = *n;
        a.children.push_back(c);
      }
    }
    return a;
  }

 private:
  void parse_enum(Attr& a, const spec::ValueRule& rule, const yaml::Node& value, const std::string& path) {
    if (!value.IsScalar()) {
      r_.wrong_type(value, path, "an enum name or number");
      a.valid = false;
      return;
    }
    const auto* values = rules().enum_values(rule.enum_name);
    std::string upper = util::to_upper(value.Scalar());
    for (const auto& [name, v] : *values) {
      // IBV_MTU_1024, MTU_1024 and 1024 all name the same value; so do IBV_MIG_ARMED and ARMED.
      std::string_view tail = name;
      tail.remove_prefix(tail.find('_') + 1);
      std::string_view short_name = tail.substr(tail.find('_') + 1);
      if (upper == name || upper == tail || upper == short_name) {
        a.number = v;
        return;
      }
    }
    if (auto n = util::parse_uint(value.Scalar())) {
      a.number = *n;  // raw enum value; range-checked by check/values
      return;
    }
    std::vector<std::string> names;
    for (const auto& [name, v] : *values) names.push_back(name);
    auto& d = r_.sink().error("Q106", a.loc, path, "unknown " + a.field + " '" + value.Scalar() + "'");
    d.rule = "verbs enum " + rule.enum_name;
    d.hint = "one of: " + util::join(names, ", ");
    a.valid = false;
  }

  void parse_gid(Attr& a, const yaml::Node& value, const std::string& path) {
    auto s = r_.string(value, path);
    if (!s) {
      a.valid = false;
      return;
    }
    unsigned char buf[16];
    if (inet_pton(AF_INET6, s->c_str(), buf) != 1) {
      auto& d = r_.sink().error("Q103", a.loc, path, "'" + *s + "' is not a GID");
      d.hint = "write an IPv6-form GID such as fe80::5054:ff:fe12:3401 or ::ffff:192.0.2.1, or 'peer'";
      a.valid = false;
    }
  }

  void parse_sub(Attr& a, const yaml::Node& value, const std::string& path,
                 const std::map<std::string, spec::ValueRule>& fields, bool allow_grh) {
    std::vector<std::string> allowed;
    for (const auto& [k, v] : fields) allowed.push_back(k);
    if (allow_grh) allowed.push_back("grh");
    for (auto& [k, v] : r_.entries(value, path, &allowed, a.field == "grh" ? "grh" : "ah_attr")) {
      std::string p = join_path(path, k);
      if (k == "grh") {
        Attr g;
        g.field = "grh";
        g.loc = r_.loc(v);
        g.path = p;
        parse_sub(g, v, p, rules().grh_fields(), false);
        a.children.push_back(std::move(g));
        continue;
      }
      const auto& rule = fields.at(k);
      Attr c = parse(k, rule, v, v, p);
      a.children.push_back(std::move(c));
    }
  }

  void parse_ah(Attr& a, const yaml::Node& value, const std::string& path) {
    if (!value.IsMap()) {
      r_.wrong_type(value, path, "an address vector map (dlid, sl, is_global, grh: {...}) or 'peer'");
      a.valid = false;
      return;
    }
    parse_sub(a, value, path, rules().ah_fields(), true);
  }

  YamlReader& r_;
};

std::vector<std::string> attribute_field_names() {
  std::vector<std::string> names;
  for (const auto& [k, v] : rules().value_rules()) names.push_back(k);
  return names;
}

}  // namespace

void parse_expect(YamlReader& r, const yaml::Node& v, const std::string& path, Transition& t) {
  Expectation e;
  e.loc = r.loc(v);
  std::string name;
  if (v.IsScalar()) {
    name = v.Scalar();
  } else {
    for (auto& [k, ev] : r.entries(v, path, &keys::expect(), "a transition expectation")) {
      if (k == "errno")
        if (auto s = r.string(ev, join_path(path, k))) name = *s;
      if (k == "status") r.sink().error("Q101", r.loc(ev), join_path(path, k), "a transition expects an 'errno', not a completion 'status'");
    }
  }
  if (name.empty()) return;
  if (util::to_lower(name) == "ok" || name == "0") {
    t.expect = e;
    return;
  }
  e.errno_name = util::to_upper(name);
  e.errno_value = errno_from_name(name);
  if (e.errno_value == 0) {
    auto& d = r.sink().error("Q106", e.loc, path, "unknown errno '" + name + "'");
    auto guess = util::did_you_mean(util::to_upper(name), known_errno_names());
    d.hint = guess.empty() ? "known: " + util::join(known_errno_names(), ", ") : "did you mean '" + guess + "'?";
    // A failure is expected, of an errno no one knows (-1): the validator judges nothing more of
    // this transition (its Q106 is the one error), and a scenario with an error never runs.
    e.errno_value = -1;
  }
  t.expect = e;
}

// The body of one transition: attribute fields plus `expect`/`defaults` (and `to` in lists).
void load_transition_body(YamlReader& r, const yaml::Node& body, const std::string& path, Transition& t, bool in_list) {
  if (body.IsNull()) return;
  std::vector<std::string> allowed = attribute_field_names();
  for (const auto& k : keys::transition_control()) allowed.push_back(k);
  if (in_list) allowed.push_back("to");
  AttrParser parser(r);
  std::map<std::string, SourceLoc> control_seen;  // to/expect/defaults given twice
  if (!body.IsMap()) {
    r.wrong_type(body, path, "a map of ibv_qp_attr fields");
    return;
  }
  t.attrs.reserve(t.attrs.size() + body.size());
  for (const auto& kv : body) {
    if (!kv.first.IsScalar()) {
      r.wrong_type(kv.first, path, "an attribute name");
      continue;
    }
    std::string key = kv.first.Scalar();
    std::string p = join_path(path, key);
    if (key == "to" || key == "expect" || key == "defaults") {
      if (auto it = control_seen.find(key); it != control_seen.end()) {
        auto& d = r.sink().error("Q105", r.loc(kv.first), p, "duplicate key '" + key + "'");
        d.related.push_back({it->second, "first defined here"});
        d.rule = "YAML: keys in a map must be unique";
        continue;
      }
      control_seen[key] = r.loc(kv.first);
    }
    if (key == "to" && in_list) continue;
    if (key == "expect") {
      parse_expect(r, kv.second, p, t);
      continue;
    }
    if (key == "defaults") {
      if (auto b = r.boolean(kv.second, p)) t.use_defaults = *b;
      continue;
    }
    if (t.attr(key)) {
      auto& d = r.sink().error("Q105", r.loc(kv.first), p, "duplicate key '" + key + "'");
      d.related.push_back({t.attr(key)->key_loc, "first defined here"});
      continue;
    }
    const spec::ValueRule* rule = rules().value_rule(key);
    if (!rule) {
      auto& d = r.sink().error("Q101", r.loc(kv.first), p, "unknown ibv_qp_attr field '" + key + "'");
      d.rule = "struct ibv_qp_attr members (schemas/verbs-rules.yaml attributes)";
      std::string upper = util::to_upper(key);
      if (upper.rfind("IBV_QP_", 0) != 0) upper = "IBV_QP_" + upper;
      const spec::AttrInfo* by_mask = nullptr;
      for (const auto& a : rules().attributes())
        if (a.mask_name == upper) by_mask = &a;
      if (by_mask) {
        d.hint = "write the struct field name '" + by_mask->fields[0] + "' (the mask bit " + by_mask->mask_name +
                 " is derived from it)";
      } else {
        auto guess = util::did_you_mean(key, allowed);
        d.hint = guess.empty() ? "see `qpo rules show` for the fields each transition accepts"
                               : "did you mean '" + guess + "'?";
      }
      continue;
    }
    if (key == "qp_state") {
      auto& d = r.sink().error("Q101", r.loc(kv.first), p, "qp_state is set by the transition itself");
      d.hint = in_list ? "use 'to:'" : "the key of this entry under states: is the target state";
      continue;
    }
    t.attrs.push_back(parser.parse(key, *rule, kv.first, kv.second, p));
  }
}

std::optional<spec::QpState> state_or_report(YamlReader& r, const yaml::Node& n, const std::string& path) {
  if (!n.IsScalar()) {
    r.wrong_type(n, path, "a QP state name");
    return std::nullopt;
  }
  auto st = spec::parse_state(n.Scalar());
  if (!st) {
    auto& d = r.sink().error("Q106", r.loc(n), path, "unknown QP state '" + n.Scalar() + "'");
    d.rule = "enum ibv_qp_state";
    std::vector<std::string> names;
    for (int i = 0; i < spec::kStateCount; ++i) names.emplace_back(spec::state_name(static_cast<spec::QpState>(i)));
    auto guess = util::did_you_mean(util::to_upper(n.Scalar()), names);
    d.hint = guess.empty() ? "states: " + util::join(names, ", ") : "did you mean '" + guess + "'?";
  }
  return st;
}

namespace {

void load_states(YamlReader& r, const yaml::Node& n, const std::string& path, Qp& q) {
  for (auto& [key, key_loc, body] : r.keyed_entries(n, path, nullptr, "the bring-up states")) {
    std::string p = join_path(path, key);
    auto st = spec::parse_state(key);
    Transition t;
    t.path = p;
    t.bring_up = true;
    t.loc = key_loc;
    if (!st) {
      auto& d = r.sink().error("Q106", t.loc, p, "unknown QP state '" + key + "'");
      d.rule = "enum ibv_qp_state";
      d.hint = "bring-up states are INIT, RTR, RTS (in that order)";
      continue;
    }
    t.to = *st;
    load_transition_body(r, body, p, t, false);
    q.transitions.push_back(std::move(t));
  }
}

void load_transition_list(YamlReader& r, const yaml::Node& n, const std::string& path, Qp& q) {
  if (!n.IsSequence()) {
    r.wrong_type(n, path, "a list of {to: STATE, ...}");
    return;
  }
  // Aliases can make a short file mean millions of transitions: cap what one QP may list.
  constexpr size_t kMaxTransitions = 256;
  if (n.size() > kMaxTransitions) {
    auto& d = r.sink().error("Q110", r.loc(n), path, "QP lists " + std::to_string(n.size()) +
                                                        " transitions; the limit is " + std::to_string(kMaxTransitions));
    d.hint = "split the experiment into several scenarios";
    return;
  }
  for (size_t i = 0; i < n.size(); ++i) {
    const yaml::Node item = n[i];
    std::string p = path + "[" + std::to_string(i) + "]";
    Transition t;
    t.path = p;
    t.bring_up = false;
    t.loc = r.loc(item);
    if (item.IsScalar()) {  // "- ERR" is short for "- {to: ERR}"
      auto st = state_or_report(r, item, p);
      if (!st) continue;
      t.to = *st;
      q.transitions.push_back(std::move(t));
      continue;
    }
    if (!item.IsMap()) {
      r.wrong_type(item, p, "{to: STATE, ...attributes}");
      continue;
    }
    if (!item["to"]) {
      auto& d = r.sink().error("Q104", t.loc, p, "transition needs 'to'");
      d.hint = "e.g. '- {to: SQD, en_sqd_async_notify: 1}'";
      continue;
    }
    auto st = state_or_report(r, item["to"], join_path(p, "to"));
    if (!st) continue;
    t.to = *st;
    load_transition_body(r, item, p, t, true);
    q.transitions.push_back(std::move(t));
  }
}

// A CQ or XRCD reference keeps where it was written also when its value is not a name (the
// loader's Q102): the validator then does not call it missing as well.
Ref written_ref(YamlReader& r, const yaml::Node& value, const std::string& path) {
  Ref ref = r.ref(value, path);
  if (!ref) ref.loc = r.loc(value);
  return ref;
}

void load_cap(YamlReader& r, const yaml::Node& n, const std::string& path, QpCap& cap) {
  cap.loc = r.loc(n);
  for (auto& [key, value] : r.entries(n, path, &keys::cap(), "cap")) {
    std::string p = join_path(path, key);
    auto v = r.uint(value, p, 0xFFFFFFFF);
    if (!v) continue;
    cap.given[key] = r.loc(value);
    uint32_t x = static_cast<uint32_t>(*v);
    if (key == "max_send_wr") cap.max_send_wr = x;
    else if (key == "max_recv_wr") cap.max_recv_wr = x;
    else if (key == "max_send_sge") cap.max_send_sge = x;
    else if (key == "max_recv_sge") cap.max_recv_sge = x;
    else if (key == "max_inline_data") cap.max_inline_data = x;
  }
}

constexpr uint64_t kMaxExpandedQps = 200000;
constexpr uint64_t kMaxExpandedTransitions = 2000000;

// `count: N` turns a QP into N QPs named name.0 .. name.(N-1). A counted QP connected to a
// counted peer pairs up index by index (their counts must match); connected to a single QP,
// all of them connect to it (fan-in).
void expand_counts(YamlReader& r, Scenario& s) {
  bool any = false;
  for (const auto& q : s.qps) any |= q.count > 0;
  if (!any) return;
  // The expanded model has a budget, checked before anything is copied: a 150-byte file with
  // count: 1000000 (or aliases multiplying a transitions: list) must not take gigabytes.
  uint64_t qps = 0, transitions = 0;
  for (const auto& q : s.qps) {
    uint64_t n = q.count ? q.count : 1;
    qps += n;
    transitions += n * q.transitions.size();
  }
  if (qps > kMaxExpandedQps || transitions > kMaxExpandedTransitions) {
    const Qp* biggest = &s.qps.front();
    for (const auto& q : s.qps)
      if (q.count * std::max<size_t>(1, q.transitions.size()) > biggest->count * std::max<size_t>(1, biggest->transitions.size()))
        biggest = &q;
    auto& d = r.sink().error("Q606", biggest->loc, "qps." + biggest->name + ".count",
                             "count: expands the scenario to " + std::to_string(qps) + " QPs and " +
                                 std::to_string(transitions) + " transitions; the limits are " +
                                 std::to_string(kMaxExpandedQps) + " QPs and " + std::to_string(kMaxExpandedTransitions) +
                                 " transitions");
    d.rule = "qpo caps the expanded model so a small file cannot mean gigabytes of work";
    d.hint = "lower count:, or split the experiment into several scenarios";
    for (auto& q : s.qps) q.count = 0;  // keep the templates only: nothing expanded, nothing run
    s.qps.clear();
    return;
  }
  std::map<std::string, uint32_t> counts;
  std::map<std::string, SourceLoc> count_origins;  // groups whose count an override set
  for (const auto& q : s.qps)
    if (q.count) {
      counts[q.name] = q.count;
      if (q.count_origin.given()) count_origins[q.name] = q.count_origin;
      s.groups.push_back(Group{q.name, q.loc, Group::Kind::Qp, 0, q.count, q.count_origin});  // named by workloads and steps
    }
  std::vector<Qp> out;
  out.reserve(qps);
  std::set<std::pair<std::string, std::string>> mismatched;  // (group, peer group) reported as Q502
  for (auto& q : s.qps) {
    if (!q.count) {
      if (q.connect && counts.count(q.connect.name)) {
        auto& d = r.sink().error("Q502", q.connect.loc, "qps." + q.name + ".connect",
                                 "'" + q.connect.name + "' has count: " + std::to_string(counts[q.connect.name]) +
                                     "; connect to one of its QPs");
        d.hint = "write '" + q.connect.name + ".0' (the expanded names are " + q.connect.name + ".0 .. " + q.connect.name +
                 "." + std::to_string(counts[q.connect.name] - 1) + ")";
      }
      out.push_back(std::move(q));
      continue;
    }
    auto peer = q.connect ? counts.find(q.connect.name) : counts.end();
    // Once per pair: the peer group connects back here, and its own check would say it again.
    bool reported = peer != counts.end() && mismatched.count({q.connect.name, q.name});
    if (peer != counts.end() && peer->second != q.count && !reported) {
      mismatched.insert({q.name, q.connect.name});
      // A count an override set is the cause: point at its flag (or matrix value), not the file.
      SourceLoc at = q.connect.loc;
      std::string path = "qps." + q.name + ".connect";
      if (q.count_origin.given()) {
        at = q.count_origin;
        path = "qps." + q.name + ".count";
      } else if (auto o = count_origins.find(q.connect.name); o != count_origins.end()) {
        at = o->second;
        path = "qps." + q.connect.name + ".count";
      }
      auto& d = r.sink().error("Q502", at, path,
                               "'" + q.name + "' has count " + std::to_string(q.count) + " but its peer '" +
                                   q.connect.name + "' has count " + std::to_string(peer->second));
      d.rule = "counted QPs connect index by index";
    }
    for (uint32_t i = 0; i < q.count; ++i) {
      Qp copy = q;
      copy.count = 0;
      copy.name = q.name + "." + std::to_string(i);
      if (peer != counts.end()) copy.connect.name = q.connect.name + "." + std::to_string(i);
      // The members share the template's transitions (their paths name the template's keys,
      // where the file wrote them); the validator elaborates the list once for the group.
      out.push_back(std::move(copy));
    }
  }
  // An expanded name may be one the file also writes out (q: {count: 2} beside q.1).
  std::unordered_map<std::string_view, const Qp*> seen;
  seen.reserve(out.size());
  std::vector<size_t> keep;
  for (size_t i = 0; i < out.size(); ++i) {
    auto [it, fresh] = seen.emplace(out[i].name, &out[i]);
    if (fresh) {
      keep.push_back(i);
      continue;
    }
    auto& d = r.sink().error("Q105", out[i].loc, "qps." + out[i].name,
                             "QP name '" + out[i].name + "' is written twice: once by count: and once by hand");
    d.related.push_back({it->second->loc, "the other one"});
    d.hint = "rename the hand-written QP, or lower the count";
  }
  if (keep.size() != out.size()) {
    std::vector<Qp> unique;
    unique.reserve(keep.size());
    for (size_t i : keep) unique.push_back(std::move(out[i]));
    out = std::move(unique);
  }
  s.qps = std::move(out);
}

}  // namespace

void load_qps(YamlReader& r, const yaml::Node& n, Scenario& s) {
  if (!n.IsMap()) {
    if (!n.IsNull()) r.wrong_type(n, "qps", "a map of name: {...}");
    return;
  }
  s.qps.reserve(s.qps.size() + n.size());  // a Qp is large: moving 10,000 of them as the list grows showed
  for (const auto& kv : n) {
    if (!kv.first.IsScalar()) {
      r.wrong_type(kv.first, "qps", "a name");
      continue;
    }
    Qp q;
    q.name = kv.first.Scalar();
    q.loc = r.loc(kv.first);
    q.type_loc = q.loc;
    std::string path = join_path("qps", q.name);
    if (!check_name(r, q.name, q.loc, path)) continue;
    if (const Qp* prev = s.qp(q.name)) {
      auto& d = r.sink().error("Q105", q.loc, path, "duplicate name '" + q.name + "'");
      d.related.push_back({prev->loc, "first defined here"});
      continue;
    }
    if (kv.second.IsNull()) {
      auto& d = r.sink().error("Q104", q.loc, path, "QP '" + q.name + "' is empty");
      d.hint = "a QP needs at least pd, type, send_cq and recv_cq";
      continue;
    }
    for (auto& [key, value] : r.entries(kv.second, path, &keys::qp(), "a queue pair")) {
      std::string p = join_path(path, key);
      if (key == "pd") q.pd = r.ref(value, p);
      else if (key == "type") {
        q.type_loc = r.loc(value);
        if (auto t = r.string(value, p)) {
          q.type_name = util::to_upper(*t);
          q.type = rules().type_index(*t);
          if (q.type < 0) {
            auto& d = r.sink().error("Q106", q.type_loc, p, "unknown QP type '" + *t + "'");
            d.rule = "enum ibv_qp_type";
            auto guess = util::did_you_mean(util::to_upper(*t), rules().type_names());
            d.hint = guess.empty() ? "types: RC, UC, UD, XRC_SEND, XRC_RECV, RAW_PACKET" : "did you mean '" + guess + "'?";
          } else {
            q.type_name = rules().types()[static_cast<size_t>(q.type)].name;
            q.qp_type = rules().types()[static_cast<size_t>(q.type)].kind();
          }
        }
      } else if (key == "send_cq") q.send_cq = written_ref(r, value, p);
      else if (key == "recv_cq") q.recv_cq = written_ref(r, value, p);
      else if (key == "srq") q.srq = r.ref(value, p);
      else if (key == "xrcd") q.xrcd = written_ref(r, value, p);
      else if (key == "cap") load_cap(r, value, p, q.cap);
      else if (key == "sq_sig_all") {
        if (auto b = r.boolean(value, p)) q.sq_sig_all = *b;
      } else if (key == "connect") q.connect = r.ref(value, p);
      else if (key == "count") {
        if (auto c = r.uint(value, p, 1000000)) {
          if (*c == 0) r.sink().error("Q401", r.loc(value), p, "count must be at least 1");
          else q.count = static_cast<uint32_t>(*c);
          if (r.from_override(value)) q.count_origin = r.loc(value);
        }
      }
      else if (key == "cm") load_cm(r, value, p, q);
      else if (key == "states") load_states(r, value, p, q);
      else if (key == "transitions") load_transition_list(r, value, p, q);
    }
    if (q.cm.given && q.count) {
      auto& d = r.sink().error("Q126", q.cm.loc, path + ".cm", "QP '" + q.name + "' has count: and cm:");
      d.rule = "an rdma_cm connection is one QP on each side, with its own port";
      d.hint = "write the connected QPs out by hand";
      q.cm = CmSpec{};
    }
    // Bring-up transitions come first whatever the key order in the file.
    auto& transitions = q.transitions.edit();
    std::stable_partition(transitions.begin(), transitions.end(), [](const Transition& t) { return t.bring_up; });
    for (const char* required : {"pd", "type"}) {
      if (!kv.second.IsMap()) break;  // entries() already reported the wrong type
      if (!kv.second[required]) {
        auto& d = r.sink().error("Q104", q.loc, path, "QP '" + q.name + "' needs '" + required + "'");
        d.hint = std::string("add '") + required + ": ...'";
      }
    }
    s.qps.push_back(std::move(q));
  }
  expand_counts(r, s);
}

}  // namespace qpo::scenario::detail
