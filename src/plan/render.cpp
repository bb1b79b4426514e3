#include "plan/plan.h"
#include "util/strings.h"

namespace qpo::plan {

namespace {
std::string arg_text(const Arg& a) {
  std::string out = util::printable(a.name, 200) + "=" + util::printable(a.value, 500);
  if (a.runtime && !a.note.empty()) out += " (" + a.note + ")";
  else if (!a.note.empty()) out += " (" + a.note + ")";
  if (a.from_default) out += " [default]";
  return out;
}
}  // namespace

std::string render_text(const Plan& p) {
  const auto& rules = spec::RuleTable::builtin();
  std::string out = "plan for " + util::printable(p.scenario.empty() ? p.file : p.scenario, 200) + " (" +
                    std::to_string(p.step_count()) + " steps)\n";
  for (const auto& h : p.hosts) {
    out += "\nhost " + util::printable(h.host, 200) + " (" + util::printable(h.address, 200) + ")\n";
    Phase last = Phase::Teardown;
    int last_stage = -1;
    bool first = true;
    for (const auto& st : h.steps) {
      // After bring-up: a header per stage (the hosts meet at its end); before, per phase.
      if (st.stage >= 0 && st.stage != last_stage)
        out += "  -- stage " + std::to_string(st.stage + 1) + ": " + util::printable(p.stages[static_cast<size_t>(st.stage)], 300) + "\n";
      else if (st.stage < 0 && (first || st.phase != last || last_stage >= 0))
        out += "  -- " + std::string(phase_name(st.phase)) + "\n";
      first = false;
      last = st.phase;
      last_stage = st.stage;
      char num[16];
      std::snprintf(num, sizeof num, "%4d  ", st.index);
      out += num + st.verb + " " + util::printable(st.object, 200);
      if (st.has_mask) {
        out += "  " + st.from_state + "->" + st.to_state + "  attr_mask=" + util::hex(st.mask) + " (" +
               rules.mask_names(st.mask) + ")";
        out += "  => " + st.prediction;
      } else if (!st.expect.empty()) {
        out += "  expect " + st.expect;
      }
      out += "\n";
      for (const auto& a : st.args) out += "          " + arg_text(a) + "\n";
    }
  }
  return out;
}

void render_json(util::JsonWriter& w, const Plan& p) {
  const auto& rules = spec::RuleTable::builtin();
  w.begin_object();
  w.field("scenario", p.scenario);
  w.field("file", p.file);
  w.key("stages").begin_array();
  for (const auto& name : p.stages) w.value(name);
  w.end_array();
  w.key("hosts").begin_array();
  for (const auto& h : p.hosts) {
    w.begin_object();
    w.field("host", h.host);
    w.field("address", h.address);
    w.key("steps").begin_array();
    for (const auto& st : h.steps) {
      w.begin_object();
      w.field("index", st.index);
      w.field("kind", step_kind_name(st.kind));
      w.field("phase", phase_name(st.phase));
      if (st.stage >= 0) w.field("stage", st.stage + 1);
      w.field("verb", st.verb);
      w.field("object", st.object);
      if (st.has_mask) {
        w.field("from", st.from_state);
        w.field("to", st.to_state);
        w.field("attr_mask", static_cast<uint64_t>(st.mask));
        w.field("attr_mask_hex", util::hex(st.mask));
        w.key("attr_mask_names").begin_array();
        const std::string names = rules.mask_names(st.mask, "|");  // split() views into it: keep it alive
        for (auto name : util::split(names, '|')) w.value(name);
        w.end_array();
        w.field("prediction", st.prediction);
      }
      if (!st.expect.empty()) w.field("expect", st.expect);
      w.key("args").begin_array();
      for (const auto& a : st.args) {
        w.begin_object();
        w.field("name", a.name);
        w.field("value", a.value);
        w.field("runtime", a.runtime);
        w.field("default", a.from_default);
        if (!a.note.empty()) w.field("note", a.note);
        w.end_object();
      }
      w.end_array();
      w.end_object();
    }
    w.end_array();
    w.end_object();
  }
  w.end_array();
  w.end_object();
}

}  // namespace qpo::plan
