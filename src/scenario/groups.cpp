// Counted groups by name. After the QPs are expanded (load_qp.cpp expand_counts): MRs with
// `count:` or `per_qp:` become name.0 .. name.(N-1), and a workload whose `qp:` names a QP
// group (`qp: cli`) or a slice of one (`qp: cli[0:4]`) becomes, for an op loop, one workload
// per member QP (name.I for QP I, run together, reported per QP and per group) and, for a
// script, one workload whose initiators are the members. Timeline steps expand the same
// names (expand_refs). What is left for the validator are plain names.
#include <unordered_map>
#include <unordered_set>

#include "scenario/loader_internal.h"
#include "util/strings.h"

namespace qpo::scenario {

const char* group_kind_name(Group::Kind k) {
  switch (k) {
    case Group::Kind::Qp: return "QP";
    case Group::Kind::Mr: return "MR";
    case Group::Kind::Workload: return "workload";
  }
  return "?";
}

}  // namespace qpo::scenario

namespace qpo::scenario::detail {

namespace {

constexpr uint64_t kMaxExpandedMrs = 200000;

struct Member {
  Ref ref;
  uint32_t index = 0;  // the member's number (cli.3: 3); 0 for a plain name
};

struct Expansion {
  const Group* group = nullptr;  // the group the name (or slice) named, if any
  std::vector<Member> members;   // a plain name: itself
  bool ok = true;
};

std::string members_text(const Group& g) {
  return g.member(g.first) + (g.count > 1 ? " .. " + g.member(g.first + g.count - 1) : "");
}

// NAME, NAME[FROM:TO] (TO excluded), NAME[:TO], NAME[FROM:], NAME[I].
Expansion expand(YamlReader& r, const Scenario& s, const Ref& ref, Group::Kind kind, const std::string& path) {
  Expansion e;
  const std::string& text = ref.name;
  size_t open = text.find('[');
  if (open == std::string::npos) {
    if (const Group* g = s.group(text, kind)) {
      e.group = g;
      for (uint32_t i = 0; i < g->count; ++i) e.members.push_back({Ref{g->member(g->first + i), ref.loc}, g->first + i});
    } else {
      e.members.push_back({ref, 0});
    }
    return e;
  }
  e.ok = false;
  std::string base = text.substr(0, open);
  const Group* g = s.group(base, kind);
  if (!g) {
    auto& d = r.sink().error("Q131", ref.loc, path, "'" + text + "' slices '" + base + "', which is not a counted " +
                                                        group_kind_name(kind) + " group");
    d.rule = "slices NAME[FROM:TO] select members of a group written with count:";
    std::vector<std::string> names;
    for (const auto& other : s.groups)
      if (other.kind == kind) names.push_back(other.name);
    d.hint = names.empty() ? std::string("this scenario has no counted ") + group_kind_name(kind) + " group"
                           : std::string("counted ") + group_kind_name(kind) + " groups: " + util::join(names, ", ");
    return e;
  }
  auto bad = [&](const std::string& why) {
    auto& d = r.sink().error("Q130", ref.loc, path, "'" + text + "' " + why);
    d.rule = "a slice NAME[FROM:TO] takes members FROM .. TO-1 of the group; NAME[I] takes member I";
    d.hint = "'" + base + "' has the members " + members_text(*g);
    return e;
  };
  std::string_view inner(text);
  inner.remove_prefix(open + 1);
  if (inner.empty() || inner.back() != ']') return bad("is not a slice (it does not end with ']')");
  inner.remove_suffix(1);
  uint64_t lo = g->first, hi = static_cast<uint64_t>(g->first) + g->count, from = lo, to = hi;
  size_t colon = inner.find(':');
  auto number = [](std::string_view x) -> std::optional<uint64_t> {
    for (char c : x)
      if (c < '0' || c > '9') return std::nullopt;
    return x.empty() || x.size() > 9 ? std::nullopt : util::parse_uint(x);
  };
  if (colon == std::string_view::npos) {
    auto i = number(inner);
    if (!i) return bad("is not a slice: write NAME[FROM:TO] or NAME[I] with decimal numbers");
    from = *i;
    to = *i + 1;
  } else {
    std::string_view a = inner.substr(0, colon), b = inner.substr(colon + 1);
    auto fa = a.empty() ? std::optional<uint64_t>(lo) : number(a);
    auto fb = b.empty() ? std::optional<uint64_t>(hi) : number(b);
    if (!fa || !fb) return bad("is not a slice: write NAME[FROM:TO] or NAME[I] with decimal numbers");
    from = *fa;
    to = *fb;
  }
  if (from >= to) return bad("selects no member (FROM must be below TO; TO is excluded)");
  if (from < lo || to > hi) return bad("reaches past the group");
  e.ok = true;
  e.group = g;
  for (uint64_t i = from; i < to; ++i)
    e.members.push_back({Ref{g->member(static_cast<uint32_t>(i)), ref.loc}, static_cast<uint32_t>(i)});
  return e;
}

// Expands every name of a list; a member named twice because a group (or slice) and the
// member itself, or two overlapping slices, are both listed is Q212.
class ListExpander {
 public:
  ListExpander(YamlReader& r, const Scenario& s, Group::Kind kind) : r_(r), s_(s), kind_(kind) {}

  // Appends `ref`'s members to `out`; false when the name could not be expanded.
  bool add(const Ref& ref, const std::string& path, std::vector<Member>& out, const Group** group = nullptr) {
    Expansion e = expand(r_, s_, ref, kind_, path);
    if (!e.ok) return false;
    if (group && e.group) *group = e.group;
    for (auto& m : e.members) {
      auto [it, fresh] = seen_.emplace(m.ref.name, Seen{ref, e.group != nullptr});
      if (!fresh) {
        if (e.group || it->second.by_group) {
          auto& d = r_.sink().error("Q212", ref.loc, path, "'" + m.ref.name + "' is named twice: by '" +
                                                               it->second.by.name + "' and by '" + ref.name + "'");
          d.rule = "a group (or slice) stands for each of its members: name each member once";
          d.related.push_back({it->second.by.loc, "named here first"});
          d.hint = "drop '" + ref.name + "', or write slices that do not overlap";
          return false;
        }
        continue;  // a plain name written twice: as before groups
      }
      out.push_back(std::move(m));
    }
    return true;
  }

 private:
  struct Seen {
    Ref by;
    bool by_group;
  };
  YamlReader& r_;
  const Scenario& s_;
  Group::Kind kind_;
  std::unordered_map<std::string, Seen> seen_;
};

// " (count set by --set qps.cli.count=4)" when an override set the group's count, else "".
std::string count_set_by(const SourceLoc& origin) {
  if (!origin.given()) return "";
  if (origin.line == 0) return " (count set by " + std::string(origin.file) + ")";
  return " (count set by the matrix value at " + std::string(origin.file) + ":" + std::to_string(origin.line) + ")";
}

// An MR reference of workload `w`: a group is only meaningful where each QP takes its own.
void mr_group_not_here(YamlReader& r, const Workload& w, const Ref& mr, const char* key, const Group& g,
                       const std::string& why, const std::string& hint = "") {
  auto& d = r.sink().error("Q213", mr.loc, "workloads." + w.name + "." + key,
                           "'" + mr.name + "' is a group of " + std::to_string(g.count) + " MRs; " + why);
  d.rule = "an MR group gives member I of a QP group its MR I (op workloads on a QP group)";
  d.hint = !hint.empty() ? hint : "name one of its MRs (" + members_text(g) + "), or run an op workload on a QP group";
}

}  // namespace

void expand_mr_groups(YamlReader& r, Scenario& s) {
  bool any = false;
  for (const auto& m : s.mrs) any |= m.count > 0 || m.per_qp;
  if (!any) return;
  uint64_t total = 0;
  for (auto& m : s.mrs) {
    if (m.per_qp) {
      const Group* g = s.group(m.per_qp.name, Group::Kind::Qp);
      if (m.count) {
        auto& d = r.sink().error("Q132", m.per_qp.loc, "mrs." + m.name + ".per_qp", "MR '" + m.name + "' gives both count: and per_qp:");
        d.hint = "keep per_qp: (its count is the QP group's)";
        m.count = 0;
      } else if (!g) {
        auto& d = r.sink().error("Q214", m.per_qp.loc, "mrs." + m.name + ".per_qp",
                                 "'" + m.per_qp.name + "' is not a counted QP group");
        d.rule = "per_qp: GROUP gives one MR per QP of a group written with count:";
        std::vector<std::string> names;
        for (const auto& other : s.groups)
          if (other.kind == Group::Kind::Qp) names.push_back(other.name);
        d.hint = names.empty() ? "give the QP a count:, or drop per_qp:" : "counted QP groups: " + util::join(names, ", ");
      } else {
        m.count = g->count;
      }
    }
    total += m.count ? m.count : 1;
  }
  if (total > kMaxExpandedMrs) {
    auto& d = r.sink().error("Q606", s.mrs.front().loc, "mrs", "count: expands the scenario to " + std::to_string(total) +
                                                                    " MRs; the limit is " + std::to_string(kMaxExpandedMrs));
    d.rule = "qpo caps the expanded model so a small file cannot mean gigabytes of work";
    d.hint = "lower count:, or split the experiment into several scenarios";
    s.mrs.clear();
    return;
  }
  std::vector<Mr> out;
  out.reserve(total);
  std::unordered_set<std::string> written;
  for (const auto& m : s.mrs)
    if (!m.count) written.insert(m.name);
  for (auto& m : s.mrs) {
    if (!m.count) {
      out.push_back(std::move(m));
      continue;
    }
    s.groups.push_back(Group{m.name, m.loc, Group::Kind::Mr, 0, m.count});
    for (uint32_t i = 0; i < m.count; ++i) {
      Mr copy = m;
      copy.count = 0;
      copy.per_qp = {};
      copy.name = m.name + "." + std::to_string(i);
      if (written.count(copy.name)) {
        auto& d = r.sink().error("Q105", m.loc, "mrs." + copy.name,
                                 "MR name '" + copy.name + "' is written twice: once by count: and once by hand");
        d.hint = "rename the hand-written MR, or lower the count";
        continue;
      }
      out.push_back(std::move(copy));
    }
  }
  s.mrs = std::move(out);
}

void expand_workload_groups(YamlReader& r, Scenario& s) {
  bool any = false;
  for (const auto& g : s.groups) any |= g.kind == Group::Kind::Qp || g.kind == Group::Kind::Mr;
  if (!any) {
    for (const auto& w : s.workloads)
      for (const auto& q : w.initiators())
        if (q.name.find('[') != std::string::npos) any = true;  // a slice of nothing: Q131 below
    if (!any) return;
  }
  std::unordered_set<std::string> written;
  for (const auto& w : s.workloads) written.insert(w.name);
  std::vector<Workload> out;
  out.reserve(s.workloads.size());
  for (auto& w : s.workloads) {
    std::string p = "workloads." + w.name + ".qp";
    ListExpander list(r, s, Group::Kind::Qp);
    std::vector<Member> members;
    const Group* qp_group = nullptr;
    bool ok = true;
    auto initiators = w.initiators();
    for (size_t i = 0; i < initiators.size(); ++i) {
      if (!initiators[i]) continue;
      const Group* g = nullptr;
      ok &= list.add(initiators[i], w.more_qps.empty() ? p : p + "[" + std::to_string(i) + "]", members, &g);
      if (g) qp_group = g;
    }
    const Group* local = w.local_mr ? s.group(w.local_mr.name, Group::Kind::Mr) : nullptr;
    const Group* remote = w.remote_mr ? s.group(w.remote_mr.name, Group::Kind::Mr) : nullptr;
    if (!ok) {
      out.push_back(std::move(w));  // reported; the unexpanded name stays for the record
      continue;
    }
    if (!qp_group || !w.script.empty()) {
      // One workload: a plain QP, or a script whose initiators are the group's QPs.
      std::string why = qp_group ? "a script workload gets one local_mr and one remote_mr for all its QPs"
                                 : "QP '" + w.qp.name + "' is one QP, not a group";
      if (local) mr_group_not_here(r, w, w.local_mr, "local_mr", *local, why);
      if (remote) mr_group_not_here(r, w, w.remote_mr, "remote_mr", *remote, why);
      if (qp_group && !members.empty()) {
        w.on_group = true;
        w.qp = members.front().ref;
        w.more_qps.clear();
        for (size_t i = 1; i < members.size(); ++i) w.more_qps.push_back(members[i].ref);
        if (!w.more_qps_loc.given()) w.more_qps_loc = w.qp.loc;
      }
      out.push_back(std::move(w));
      continue;
    }
    // An op loop on a group: one workload per member QP.
    for (const Group* mg : {local, remote}) {
      if (mg && mg->count != qp_group->count) {
        const Ref& mr = mg == local ? w.local_mr : w.remote_mr;
        mr_group_not_here(r, w, mr, mg == local ? "local_mr" : "remote_mr", *mg,
                          "QP group '" + qp_group->name + "' has " + std::to_string(qp_group->count) + " QPs" +
                              count_set_by(qp_group->count_origin) + ": the counts must match (QP I uses MR I)",
                          "write 'per_qp: " + qp_group->name + "' on MR '" + mg->name + "' instead of its count:");
        ok = false;
      }
    }
    if (!ok) {
      out.push_back(std::move(w));
      continue;
    }
    Group wg{w.name, w.loc, Group::Kind::Workload, members.front().index, static_cast<uint32_t>(members.size())};
    for (const auto& m : members) {
      Workload copy = w;
      copy.name = wg.member(m.index);
      copy.group = w.name;
      copy.on_group = true;
      copy.qp = m.ref;
      if (local) copy.local_mr.name = local->member(m.index);
      if (remote) copy.remote_mr.name = remote->member(m.index);
      if (!written.insert(copy.name).second) {
        auto& d = r.sink().error("Q105", w.loc, "workloads." + copy.name,
                                 "workload name '" + copy.name + "' is written twice: by the group '" + w.name +
                                     "' (one workload per QP) and by hand");
        d.hint = "rename the hand-written workload";
        continue;
      }
      out.push_back(std::move(copy));
    }
    s.groups.push_back(std::move(wg));
  }
  s.workloads = std::move(out);
}

std::vector<Ref> expand_refs(YamlReader& r, const Scenario& s, const std::vector<Ref>& refs, Group::Kind kind,
                             const std::string& path) {
  bool plain = true;
  for (const auto& ref : refs) plain &= ref.name.find('[') == std::string::npos && !s.group(ref.name, kind);
  if (plain) return refs;
  ListExpander list(r, s, kind);
  std::vector<Member> members;
  for (const auto& ref : refs) list.add(ref, path, members);
  std::vector<Ref> out;
  out.reserve(members.size());
  for (auto& m : members) out.push_back(std::move(m.ref));
  return out;
}

}  // namespace qpo::scenario::detail
