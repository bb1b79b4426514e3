#include <algorithm>
#include <ostream>
#include <sstream>
#include <unordered_map>

#include "plan/plan.h"
#include "plan/render_stream.h"
#include "util/strings.h"

namespace qpo::plan {

namespace {

// Appends `s` as printable text (names and values carry scenario text): plain printable ASCII
// as it is, without a temporary (a 10,000-QP plan is ~300,000 lines of them).
void put(std::string& out, std::string_view s, size_t max) {
  if (s.size() <= max && std::all_of(s.begin(), s.end(), [](char c) { return c >= 0x20 && c < 0x7F; })) out += s;
  else out += util::printable(s, max);
}

void put_arg(std::string& out, const Arg& a) {
  out += "          ";
  put(out, a.name, 200);
  out += '=';
  put(out, a.value, 500);
  if (!a.note.empty()) {
    out += " (";
    out += a.note;
    out += ')';
  }
  if (a.from_default) out += " [default]";
  out += '\n';
}

}  // namespace

std::string render_text(const Plan& p) {
  std::ostringstream os;
  render_text(os, p);
  return os.str();
}

void render_text(std::ostream& os, const Plan& p) {
  const auto& rules = spec::RuleTable::builtin();
  // A plan has a handful of distinct masks: their words once each, not once per modify.
  std::unordered_map<spec::Mask, std::string> mask_words;
  std::string out = "plan for " + util::printable(p.scenario.empty() ? p.file : p.scenario, 200) + " (" +
                    std::to_string(p.step_count()) + " steps)\n";
  // Written out in pieces: a 10,000-QP plan is 25 MB of text, not worth holding at once.
  constexpr size_t kFlushAt = 1 << 20;
  out.reserve(kFlushAt + 4096);
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
      out += num;
      out += st.verb;
      out += ' ';
      put(out, st.object, 200);
      if (st.has_mask) {
        auto [words, fresh] = mask_words.try_emplace(st.mask);
        if (fresh) words->second = util::hex(st.mask) + " (" + rules.mask_names(st.mask) + ")";
        out += "  ";
        out += st.from_state;
        out += "->";
        out += st.to_state;
        out += "  attr_mask=";
        out += words->second;
        out += "  => ";
        out += st.prediction;
      } else if (!st.expect.empty()) {
        out += "  expect ";
        out += st.expect;
      }
      out += '\n';
      for (const auto& a : st.args) put_arg(out, a);
      if (out.size() >= kFlushAt) {
        os.write(out.data(), static_cast<std::streamsize>(out.size()));
        out.clear();
      }
    }
  }
  os.write(out.data(), static_cast<std::streamsize>(out.size()));
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
