#include "cli/rules_check.h"

#include <vector>

#include "spec/predict.h"
#include "util/strings.h"

namespace qpo::cli {

namespace {

std::vector<std::string_view> fields(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

// "IBV_QP_STATE | IBV_QP_AV" has spaces; glue everything after the third field back together.
std::string mask_text(const std::vector<std::string_view>& f) {
  std::string out;
  for (size_t i = 3; i < f.size(); ++i) out += f[i];
  return out;
}

}  // namespace

CheckLineResult check_line(std::string_view line, bool in_kernel) {
  const auto& rules = spec::RuleTable::builtin();
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  auto f = fields(line);
  if (f.size() < 4) return {"error: expected '<qp_type> <cur_state> <next_state> <attr_mask>'", true};
  int type = rules.type_index(f[0]);
  if (type < 0) {
    std::string msg = "error: unknown QP type '" + std::string(f[0].substr(0, 40)) + "'";
    auto guess = util::did_you_mean(util::to_upper(f[0]), rules.type_names());
    if (!guess.empty()) msg += " (did you mean " + guess + "?)";
    return {msg, true};
  }
  auto from = spec::parse_state(f[1]);
  auto to = spec::parse_state(f[2]);
  if (!from || !to) return {"error: unknown state '" + std::string((from ? f[2] : f[1]).substr(0, 40)) + "'", true};
  std::string error;
  auto mask = rules.parse_mask(mask_text(f), &error);
  if (!mask) return {"error: " + error, true};
  auto prediction = spec::predict_mask(rules, type, *from, *to, *mask, in_kernel);
  const auto& r = prediction.result;
  spec::Mask ignored = prediction.ignored;
  std::string note;
  if (ignored)
    note = " (ignored: " + rules.mask_names(ignored, "|") + "; uverbs removes them from a user-space call's mask for " +
           rules.types()[static_cast<size_t>(type)].name + " QPs)";
  if (!(*mask & 1u) && *from != *to)
    note += std::string(" (IBV_QP_STATE not in mask: the QP stays in ") + spec::state_name(*from) + ")";
  if (r.ok) return {"ok" + note, false};
  std::string v = "EINVAL";
  if (r.cur_state_illegal)
    v += std::string(" IBV_QP_CUR_STATE not allowed from ") + spec::state_name(*from) + ";";
  if (r.invalid_transition)
    v += std::string(" invalid transition ") + spec::state_name(r.from) + "->" + spec::state_name(r.to) + ";";
  if (r.missing) v += " missing: " + rules.mask_names(r.missing, "|") + ";";
  if (r.forbidden) v += " forbidden: " + rules.mask_names(r.forbidden, "|") + ";";
  v.pop_back();
  return {v + note, false};
}

size_t run_rules_check(std::FILE* in, std::FILE* out, bool in_kernel) {
  // Big buffered reads and writes: a million lines should take about a second.
  std::vector<char> buf(1 << 20);
  std::string pending, output;
  size_t malformed = 0;
  auto flush_line = [&](std::string_view line) {
    if (line.empty() || line[0] == '#') {
      return;  // blank lines and comments produce no verdict
    }
    auto r = check_line(line, in_kernel);
    malformed += r.malformed;
    output += r.verdict;
    output += '\n';
    if (output.size() > (1 << 20)) {
      std::fwrite(output.data(), 1, output.size(), out);
      output.clear();
    }
  };
  size_t n;
  bool discarding = false;  // inside an overlong line that already got its verdict
  while ((n = std::fread(buf.data(), 1, buf.size(), in)) > 0) {
    size_t start = 0;
    for (size_t i = 0; i < n; ++i) {
      if (buf[i] != '\n') continue;
      if (discarding) {
        discarding = false;
      } else if (pending.empty()) {
        flush_line(std::string_view(buf.data() + start, i - start));
      } else {
        pending.append(buf.data() + start, i - start);
        flush_line(pending);
        pending.clear();
      }
      start = i + 1;
    }
    if (!discarding) pending.append(buf.data() + start, n - start);
    if (pending.size() > (1 << 16)) {  // a "line" this long is junk: judge its start, skip the rest
      flush_line(std::string_view(pending).substr(0, 256));
      pending.clear();
      discarding = true;
    }
  }
  if (!pending.empty() && !discarding) flush_line(pending);
  std::fwrite(output.data(), 1, output.size(), out);
  std::fflush(out);
  return malformed;
}

}  // namespace qpo::cli
