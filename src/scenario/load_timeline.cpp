// Loading of `timeline:`: the ordered steps that run after bring-up. Transition steps become
// entries of their QPs' `transitions` (so every pass sees one list per QP) and the step keeps
// their indexes; without a timeline the default order is written (scenario/timeline.h).
#include <map>

#include "scenario/keys.h"
#include "scenario/loader_internal.h"
#include "util/async_event_names.h"
#include "util/strings.h"

namespace qpo::scenario::detail {

namespace {

const std::vector<std::string>& step_keys() {
  static const std::vector<std::string> k{"smoke", "workload", "workloads", "qp", "qps", "to", "attrs", "expect",
                                          "defaults", "barrier", "pause", "event", "forbid", "on", "within",
                                          "srq", "srq_limit", "bind", "invalidate", "link"};
  return k;
}

// Every kind of step, as the messages list them: one list for all of them.
const std::string& step_kinds() {
  static const std::string k =
      "smoke, {workload: W} or {workloads: [W, ...]}, {qp: Q, to: STATE} or {qps: [...], to: STATE}, "
      "{barrier: NAME}, {pause: 1ms}, {event: E, on: X} or {forbid: E, on: X}, {srq: S, srq_limit: N}, "
      "{bind: MW}, {invalidate: MW}, {link: up|down, on: DEVICE}";
  return k;
}

// The names a step lists: one scalar or a list of them.
std::vector<Ref> refs(YamlReader& r, const yaml::Node& n, const std::string& path) {
  std::vector<Ref> out;
  if (n.IsSequence()) {
    for (size_t i = 0; i < n.size(); ++i)
      if (Ref x = r.ref(n[i], path + "[" + std::to_string(i) + "]")) out.push_back(x);
  } else if (Ref x = r.ref(n, path)) {
    out.push_back(x);
  }
  return out;
}

class TimelineLoader {
 public:
  TimelineLoader(YamlReader& r, Scenario& s) : r_(r), s_(s) {}

  void load(const yaml::Node& n) {
    if (!n.IsSequence()) {
      r_.wrong_type(n, "timeline", ("a list of steps (" + step_kinds() + ")").c_str());
      return;
    }
    for (size_t i = 0; i < n.size(); ++i) step(n[i], "timeline[" + std::to_string(i) + "]");
  }

 private:
  void step(const yaml::Node& item, const std::string& path) {
    TimelineStep t;
    t.loc = r_.loc(item);
    t.path = path;
    if (item.IsScalar() && item.Scalar() == "smoke") {  // "- smoke" is short for "- {smoke: true}"
      s_.timeline.push_back(std::move(t));
      return;
    }
    if (!item.IsMap()) {
      auto& d = r_.wrong_type(item, path, ("a step: " + step_kinds()).c_str());
      d.hint = item.IsScalar() && util::did_you_mean(item.Scalar(), {"smoke"}) == "smoke"
                   ? "did you mean 'smoke'?"
                   : "e.g. '- {qp: qa, to: SQD, attrs: {en_sqd_async_notify: 1}}'";
      return;
    }
    auto entries = r_.entries(item, path, &step_keys(), "a timeline step");
    bool unknown_key = entries.size() < item.size();  // reported already (Q101, with a did-you-mean)
    std::map<std::string, yaml::Node> by_key(entries.begin(), entries.end());
    auto has = [&](const char* k) { return by_key.count(k) > 0; };
    int kinds = has("smoke") + (has("workload") || has("workloads")) + (has("qp") || has("qps")) + has("barrier") +
                has("pause") + (has("event") || has("forbid")) + has("srq") + has("bind") +
                has("invalidate") + has("link");
    if (kinds != 1) {
      if (!kinds && unknown_key) return;  // the unknown key was meant to say the kind: one error is enough
      auto& d = r_.sink().error("Q104", t.loc, path,
                                kinds ? "a timeline step does one thing; this one names " + std::to_string(kinds)
                                      : "a timeline step needs one of: " + step_kinds());
      if (kinds) d.hint = "split it into one step per line";
      return;
    }
    if (has("smoke")) {
      if (auto b = r_.boolean(by_key["smoke"], join_path(path, "smoke")); b && !*b) return;  // smoke: false
    } else if (has("workload") || has("workloads")) {
      if (has("workload") && has("workloads")) {
        r_.sink().error("Q105", t.loc, path, "write either 'workload' or 'workloads'");
        return;
      }
      t.kind = TimelineStep::Kind::Workloads;
      const char* key = has("workload") ? "workload" : "workloads";
      t.workloads = expand_refs(r_, s_, refs(r_, by_key[key], join_path(path, key)), Group::Kind::Workload, join_path(path, key));
      if (t.workloads.empty()) return;
    } else if (has("qp") || has("qps")) {
      if (!transition_step(t, by_key, path)) return;
    } else if (has("event") || has("forbid")) {
      if (!event_step(t, by_key, path)) return;
    } else if (has("srq")) {
      if (!srq_limit_step(t, by_key, path)) return;
    } else if (has("bind") || has("invalidate")) {
      // Memory windows: `- bind: w1` (or a list), `- invalidate: w1`.
      const char* key = has("bind") ? "bind" : "invalidate";
      t.kind = has("bind") ? TimelineStep::Kind::BindMw : TimelineStep::Kind::InvalidateMw;
      t.mws = refs(r_, by_key[key], join_path(path, key));
      if (t.mws.empty()) return;
    } else if (has("link")) {
      if (!link_step(t, by_key, path)) return;
    } else if (has("barrier")) {
      t.kind = TimelineStep::Kind::Barrier;
      if (auto x = r_.string(by_key["barrier"], join_path(path, "barrier"))) t.label = *x;
    } else {
      t.kind = TimelineStep::Kind::Pause;
      auto us = duration_us(r_, by_key["pause"], join_path(path, "pause"));
      if (!us) return;
      t.pause_ms = (*us + 999) / 1000;
    }
    for (const char* k : {"to", "attrs", "expect", "defaults"})
      if (has(k) && t.kind != TimelineStep::Kind::Transition)
        r_.sink().error("Q101", r_.loc(by_key[k]), join_path(path, k),
                        std::string("'") + k + "' belongs to a transition step ({qp: NAME, to: STATE})");
    if (has("within") && t.kind != TimelineStep::Kind::Event)
      r_.sink().error("Q101", r_.loc(by_key["within"]), join_path(path, "within"),
                      "'within' belongs to an event step ({event: NAME, on: OBJECT})");
    if (has("on") && t.kind != TimelineStep::Kind::Event && t.kind != TimelineStep::Kind::Link)
      r_.sink().error("Q101", r_.loc(by_key["on"]), join_path(path, "on"),
                      "'on' belongs to an event step ({event: NAME, on: OBJECT}) or a link step ({link: down, on: DEVICE})");
    if (has("srq_limit") && t.kind != TimelineStep::Kind::SrqLimit)
      r_.sink().error("Q101", r_.loc(by_key["srq_limit"]), join_path(path, "srq_limit"),
                      "'srq_limit' belongs to an SRQ step ({srq: NAME, srq_limit: N})");
    s_.timeline.push_back(std::move(t));
  }

  // {qp: qa, to: RTS, attrs: {...}, expect: EINVAL, defaults: false}: one Transition per QP
  // named, appended to that QP's list (after its bring-up and any earlier timeline steps).
  bool transition_step(TimelineStep& t, std::map<std::string, yaml::Node>& by_key, const std::string& path) {
    t.kind = TimelineStep::Kind::Transition;
    if (by_key.count("qp") && by_key.count("qps")) {
      r_.sink().error("Q105", t.loc, path, "write either 'qp' or 'qps'");
      return false;
    }
    const char* key = by_key.count("qp") ? "qp" : "qps";
    auto names = expand_refs(r_, s_, refs(r_, by_key[key], join_path(path, key)), Group::Kind::Qp, join_path(path, key));
    if (!by_key.count("to")) {
      auto& d = r_.sink().error("Q104", t.loc, path, "a transition step needs 'to'");
      d.hint = "e.g. '- {qp: qa, to: SQD}'";
      return false;
    }
    auto to = state_or_report(r_, by_key["to"], join_path(path, "to"));
    if (!to) return false;
    Transition proto;
    proto.to = *to;
    proto.bring_up = false;
    proto.loc = t.loc;
    proto.path = path;
    if (by_key.count("attrs")) load_transition_body(r_, by_key["attrs"], join_path(path, "attrs"), proto, false);
    if (by_key.count("expect")) parse_expect(r_, by_key["expect"], join_path(path, "expect"), proto);
    if (by_key.count("defaults"))
      if (auto b = r_.boolean(by_key["defaults"], join_path(path, "defaults"))) proto.use_defaults = *b;
    for (const auto& name : names) {
      const Qp* q = s_.qp(name.name);
      if (!q) continue;  // check/timeline reports the unknown name
      auto& qp = s_.qps[static_cast<size_t>(q - s_.qps.data())];
      t.transitions.push_back({name.name, qp.transitions.size()});
      qp.transitions.push_back(proto);
    }
    t.qps = std::move(names);
    return !t.qps.empty();
  }

  // {event: IBV_EVENT_SRQ_LIMIT_REACHED, on: srq0, within: 2s}: the event must come (or have
  // come since the run began, not yet taken by an earlier step); {forbid: ..., on: ...}: it
  // must not have come, nor come within `within`. check/references checks what `on` names.
  bool event_step(TimelineStep& t, std::map<std::string, yaml::Node>& by_key, const std::string& path) {
    t.kind = TimelineStep::Kind::Event;
    if (by_key.count("event") && by_key.count("forbid")) {
      r_.sink().error("Q105", t.loc, path, "write either 'event' (it must come) or 'forbid' (it must not)");
      return false;
    }
    t.forbid = by_key.count("forbid") > 0;
    const char* key = t.forbid ? "forbid" : "event";
    auto name = r_.string(by_key[key], join_path(path, key));
    if (!name) return false;
    const auto* info = util::parse_async_event(*name);
    if (!info) {
      auto& d = r_.sink().error("Q106", r_.loc(by_key[key]), join_path(path, key), "unknown asynchronous event '" + *name + "'");
      d.rule = "events are the enum ibv_event_type names of ibv_get_async_event(3)";
      std::string guess = util::did_you_mean(util::to_upper(*name), util::async_event_names());
      if (guess.empty()) guess = util::did_you_mean("IBV_EVENT_" + util::to_upper(*name), util::async_event_names());
      d.hint = guess.empty() ? "e.g. IBV_EVENT_SRQ_LIMIT_REACHED, IBV_EVENT_SQ_DRAINED, IBV_EVENT_QP_FATAL"
                             : "did you mean '" + guess + "'?";
      return false;
    }
    t.event = info->name;
    t.event_value = info->value;
    if (!by_key.count("on")) {
      auto& d = r_.sink().error("Q104", t.loc, path, std::string("an event step needs 'on': the ") +
                                                         util::event_object_name(info->object) + " it is about");
      d.hint = std::string("e.g. '- {") + key + ": " + info->name + ", on: NAME}'";
      return false;
    }
    t.on = r_.ref(by_key["on"], join_path(path, "on"));
    if (by_key.count("within")) {
      auto us = duration_us(r_, by_key["within"], join_path(path, "within"));
      if (!us) return false;
      t.within_ms = (*us + 999) / 1000;
    }
    return static_cast<bool>(t.on);
  }

  // {srq: srq0, srq_limit: 16}: ibv_modify_srq(IBV_SRQ_LIMIT), re-arming the limit event
  // (it disarms itself when it fires).
  bool srq_limit_step(TimelineStep& t, std::map<std::string, yaml::Node>& by_key, const std::string& path) {
    t.kind = TimelineStep::Kind::SrqLimit;
    t.on = r_.ref(by_key["srq"], join_path(path, "srq"));
    if (!by_key.count("srq_limit")) {
      auto& d = r_.sink().error("Q104", t.loc, path, "an SRQ step needs 'srq_limit'");
      d.hint = "e.g. '- {srq: " + (t.on ? t.on.name : std::string("srq0")) + ", srq_limit: 16}'";
      return false;
    }
    auto n = r_.uint(by_key["srq_limit"], join_path(path, "srq_limit"), 0xFFFFFFFF);
    if (!n) return false;
    t.srq_limit = static_cast<uint32_t>(*n);
    return static_cast<bool>(t.on);
  }

  // {link: down, on: da}: `ip link set dev NETDEV down` under device da (up: back up). rxe
  // turns its port DOWN and raises IBV_EVENT_PORT_ERR, then ACTIVE and PORT_ACTIVE: the port
  // events become something a scenario can cause and expect. check/references checks `on`.
  bool link_step(TimelineStep& t, std::map<std::string, yaml::Node>& by_key, const std::string& path) {
    t.kind = TimelineStep::Kind::Link;
    auto state = r_.string(by_key["link"], join_path(path, "link"));
    if (!state) return false;
    if (*state != "down" && *state != "up") {
      auto& d = r_.sink().error("Q106", r_.loc(by_key["link"]), join_path(path, "link"),
                                "a link step sets the link 'down' or 'up', not '" + *state + "'");
      d.hint = "e.g. '- {link: down, on: da}', later '- {link: up, on: da}'";
      return false;
    }
    t.label = *state;
    if (!by_key.count("on")) {
      auto& d = r_.sink().error("Q104", t.loc, path, "a link step needs 'on': the device whose netdev it sets " + *state);
      d.hint = "e.g. '- {link: " + *state + ", on: da}'";
      return false;
    }
    t.on = r_.ref(by_key["on"], join_path(path, "on"));
    return static_cast<bool>(t.on);
  }

  YamlReader& r_;
  Scenario& s_;
};

}  // namespace

void load_timeline(YamlReader& r, const yaml::Node& n, Scenario& s) {
  s.timeline_given = true;
  TimelineLoader(r, s).load(n);
  // A QP's `transitions:` list has no place in a written timeline: it would never run.
  for (const auto& q : s.qps)
    for (const auto& t : q.transitions)
      if (!t.bring_up && t.path.rfind("timeline", 0) != 0) {
        auto& d = r.sink().error("Q306", t.loc, t.path,
                                 "QP '" + q.name + "' lists 'transitions:' but the scenario has a 'timeline:'");
        d.rule = "with a timeline, every transition after bring-up is a timeline step, in the order it runs";
        d.hint = "move it into the timeline as '- {qp: " + q.name + ", to: " + spec::state_name(t.to) + "}'";
        break;
      }
}

}  // namespace qpo::scenario::detail
