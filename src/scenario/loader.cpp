#include "scenario/loader.h"


#include <algorithm>
#include <new>
#include <sstream>

#include "scenario/flow_depth.h"
#include "scenario/keys.h"
#include "scenario/loader_internal.h"
#include "scenario/overrides.h"
#include "scenario/timeline.h"
#include "scenario/yaml_parse.h"
#include "util/strings.h"
#include "util/utf8.h"

namespace qpo::scenario {

namespace {

// pd: may name a device, meaning that device's default PD ("one per device by default").
void add_implicit_pds(Scenario& s) {
  auto want = [&](const Ref& ref) {
    if (!ref || s.pd(ref.name) || !s.device(ref.name)) return;
    Pd pd;
    pd.name = ref.name;
    pd.loc = ref.loc;
    pd.device = Ref{ref.name, ref.loc};
    pd.implicit = true;
    s.pds.push_back(pd);
  };
  for (const auto& m : s.mrs) want(m.pd);
  for (const auto& q : s.qps) want(q.pd);
  for (const auto& q : s.srqs) want(q.pd);
  for (const auto& w : s.mws) want(w.pd);
}

// With one host (or none declared) devices may omit `host:`.
void default_hosts(Scenario& s) {
  if (s.hosts.empty()) {
    Host h;
    h.name = "local";
    s.hosts.push_back(h);
  }
  if (s.hosts.size() == 1)
    for (auto& d : s.devices)
      if (!d.host) d.host = Ref{s.hosts[0].name, d.loc};
}

// What the parser must not see: text that is not UTF-8 (it would pass broken UTF-8 on into
// every message) and flow nesting past the format's limit (Q111).
bool refuse_before_parsing(const util::SourceText& source, diag::DiagSink& sink) {
  if (auto bad = util::find_encoding_problem(source.text())) {
    auto& d = sink.error("Q112", {source.name(), bad->line, bad->col}, "", "the file is not UTF-8 text: " + bad->found);
    d.rule = "scenarios are UTF-8 (a UTF-8 byte order mark is fine)";
    d.hint = "save the file as UTF-8";
    return true;
  }
  if (auto deep = find_deep_flow(source.text())) {
    auto& d = sink.error("Q111", {source.name(), deep->line, deep->col}, "",
                         "flow collections ([ ] and { }) nest deeper than " + std::to_string(kMaxFlowDepth) + " levels here");
    d.rule = "nesting limit: " + std::to_string(kMaxFlowDepth) + " levels of [ ] and { }";
    d.hint = "a scenario needs a few levels; check for unclosed brackets before this position";
    return true;
  }
  return false;
}

// Nothing to create, so nothing to run: legal, but almost surely not what was meant (an empty
// `qps:`, or a file whose content is not what qpo reads). QPs that failed to load do not count:
// their errors say more.
void warn_if_nothing_to_do(const YamlReader& r, const yaml::Node& root, const yaml::Node* qps, diag::DiagSink& sink) {
  if (qps && (qps->IsScalar() || qps->size() > 0)) return;  // a scalar is a Q102 of its own
  auto& d = sink.warning("Q113", qps ? r.loc(*qps) : r.loc(root), "qps", "the scenario declares no QPs: there is nothing to do");
  d.rule = "a scenario creates and drives queue pairs";
  d.hint = "add a 'qps:' map (start from scenarios/rc-write-pair.yaml)";
}

}  // namespace

std::optional<Scenario> load_scenario(const util::SourceText& source, diag::DiagSink& sink,
                                      const std::vector<std::string>& overrides,
                                      const std::vector<util::SourceLoc>& override_origins) {
  YamlReader r(source.name(), sink);
  ParsedText parsed;  // owns the nodes the loader reads
  if (refuse_before_parsing(source, sink)) return std::nullopt;
  try {
    // A second document after `---` would be ignored by a reader of one: refuse it. One pass of
    // the parser reads the first document and counts the rest.
    parsed = parse_yaml(source.text());
    auto at = [&](const yaml::Mark& m) { return SourceLoc{source.name(), m.line + 1, m.column + 1}; };
    if (parsed.documents > 1) {
      auto& d = sink.error("Q100", at(parsed.second), "", "the file holds " + std::to_string(parsed.documents) +
                                                             " YAML documents; a scenario is one");
      d.hint = "split it into one file per scenario (remove the '---' separator)";
      return std::nullopt;
    }
  } catch (const NestingTooDeep& e) {
    // Block nesting (`- - - ...`, or one key per deeper line): bounded while parsing (yaml_parse.h).
    auto& d = sink.error("Q111", {source.name(), e.mark.line + 1, e.mark.column + 1}, "",
                         "the YAML nests deeper than the parser follows (" + std::to_string(e.depth) + " levels)");
    d.rule = "nesting limit: " + std::to_string(kMaxYamlNesting) + " levels";
    d.hint = "a scenario needs a few levels; check the indentation before this position";
    return std::nullopt;
  } catch (const std::bad_alloc&) {
    // Not "not valid YAML": the text may be fine, but parsing it took more memory than there is.
    auto& d = sink.error("Q110", {source.name(), 0, 0}, "", "out of memory while parsing the file");
    d.rule = "size limit: what the parser holds in memory";
    d.hint = "make the file smaller: write many QPs with 'count: N' instead of one block each";
    return std::nullopt;
  } catch (const yaml::ParseError& e) {
    SourceLoc loc{source.name(), e.mark.is_null() ? 0 : e.mark.line + 1, e.mark.is_null() ? 0 : e.mark.column + 1};
    auto& d = sink.error("Q100", loc, "", "not valid YAML: " + e.msg);
    d.rule = "YAML syntax";
    d.hint = "check indentation and brackets near this position";
    return std::nullopt;
  } catch (const std::exception& e) {
    sink.error("Q100", {source.name(), 0, 0}, "", std::string("not valid YAML: ") + e.what());
    return std::nullopt;
  }
  yaml::Node root = parsed.root;
  Scenario s;
  s.file = source.name();
  if (!root.IsMap()) {
    auto& d = sink.error("Q102", r.loc(root), "", "a scenario must be a YAML map, found " + node_kind(root));
    d.hint = "start from scenarios/rc-write-pair.yaml";
    return s;
  }
  OverrideOrigins origins;
  apply_overrides(root, overrides, sink, origins, override_origins);
  r.set_override_origins(&origins);
  const yaml::Node* qps = nullptr;
  yaml::Node qps_node, timeline_node, mcast_node;
  bool have_timeline = false, have_mcast = false;
  bool have_version = false;
  for (auto& [key, value] : r.entries(root, "", &keys::top_level(), "the scenario")) {
    if (key == "version") {
      have_version = true;
      if (auto v = r.uint(value, key, 1000)) {
        s.version = static_cast<int>(*v);
        if (*v != 1) {
          auto& d = sink.error("Q107", r.loc(value), key, "unsupported scenario version " + value.Scalar());
          d.hint = "this qpo reads version: 1";
        }
      }
    } else if (key == "name") {
      if (auto v = r.string(value, key)) s.name = *v;
    } else if (key == "description") {
      if (auto v = r.string(value, key)) s.description = *v;
    } else if (key == "tags") {
      if (auto v = r.string_list(value, key)) s.tags = *v;
    } else if (key == "requires") {
      s.requires_loc = r.loc(value);
      if (auto v = r.string_list(value, key)) {
        for (size_t i = 0; i < v->size(); ++i) {
          const auto& cap = (*v)[i];
          const auto& known = keys::capability_names();
          if (std::find(known.begin(), known.end(), cap) == known.end()) {
            auto& d = sink.error("Q106", r.loc(value.IsSequence() ? value[i] : value), key,
                                 "unknown capability '" + cap + "'");
            auto guess = util::did_you_mean(cap, known);
            d.hint = guess.empty() ? "known: " + util::join(known, ", ") : "did you mean '" + guess + "'?";
          } else {
            s.requires_caps.push_back(cap);
          }
        }
      }
    } else if (key == "hosts") {
      detail::load_hosts(r, value, s);
    } else if (key == "devices") {
      detail::load_devices(r, value, s);
    } else if (key == "pds") {
      detail::load_pds(r, value, s);
    } else if (key == "mrs") {
      detail::load_mrs(r, value, s);
    } else if (key == "cqs") {
      detail::load_cqs(r, value, s);
    } else if (key == "srqs") {
      detail::load_srqs(r, value, s);
    } else if (key == "xrcds") {
      detail::load_xrcds(r, value, s);
    } else if (key == "qps") {
      qps_node = value;
      qps = &qps_node;
    } else if (key == "workloads") {
      detail::load_workloads(r, value, s);
    } else if (key == "faults") {
      detail::load_faults(r, value, s);
    } else if (key == "wire") {
      detail::load_wire(r, value, s);
    } else if (key == "mws") {
      detail::load_mws(r, value, s);
    } else if (key == "externals") {
      detail::load_externals(r, value, s);
    } else if (key == "mcast_groups") {
      mcast_node = value;
      have_mcast = true;
    } else if (key == "timeline") {
      timeline_node = value;
      have_timeline = true;
    } else if (key == "matrix") {
      // The combinations `qpo test` runs (suite/matrix.h reads and checks it); one run uses the
      // values written in the file.
      s.has_matrix = true;
    }
  }
  if (qps) detail::load_qps(r, *qps, s);
  // Counted groups by name: MRs (count:, per_qp:), then workloads on QP groups (groups.cpp).
  detail::expand_mr_groups(r, s);
  detail::expand_workload_groups(r, s);
  if (have_mcast) {
    detail::load_mcast_groups(r, mcast_node, s);
    detail::finish_mcast_groups(r, s);
  }
  if (have_timeline) detail::load_timeline(r, timeline_node, s);
  else write_default_timeline(s);
  if (!have_version) {
    auto& d = sink.error("Q104", r.loc(root), "version", "missing required key 'version'");
    d.hint = "add 'version: 1' at the top";
  }
  default_hosts(s);
  add_implicit_pds(s);
  detail::finish_mws(s);
  warn_if_nothing_to_do(r, root, qps, sink);
  return s;
}

}  // namespace qpo::scenario
