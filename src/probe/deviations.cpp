#include "probe/deviations.h"

#include <algorithm>
#include <map>
#include <sstream>

namespace qpo::probe {

namespace {

std::string cell_of(const Case& c) {
  return spec::cell_text(spec::RuleTable::builtin().types()[static_cast<size_t>(c.type)].name, c.cur, c.next);
}

// (case, transition) -> (predicted, answered), for comparing entries.
std::map<std::pair<std::string, std::string>, std::pair<std::string, std::string>> by_cell(
    const spec::ProviderEntry& e) {
  std::map<std::pair<std::string, std::string>, std::pair<std::string, std::string>> out;
  for (const auto& d : e.deviations)
    for (const auto& cell : d.in) out[{d.what, cell}] = {d.predicted, d.answered};
  return out;
}

}  // namespace

spec::ProviderEntry entry_from(const Report& report) {
  spec::ProviderEntry e;
  e.name = report.provider;
  spec::ProbeRecord r;
  r.device = report.device;
  r.kernel = report.kernel;
  r.date = report.date;
  r.cases = report.results.size();
  r.agreed = report.agreed();
  r.not_probed = report.not_probed;
  e.probed = r;
  // Group by (case, predicted, answered), keeping the order in which each group first appears.
  std::map<std::tuple<std::string, std::string, std::string>, size_t> index;
  for (const auto& res : report.results) {
    if (res.agreed()) continue;
    auto key = std::make_tuple(res.c.key.text(), res.c.predicted, res.answered);
    auto it = index.find(key);
    if (it == index.end()) {
      it = index.emplace(key, e.deviations.size()).first;
      e.deviations.push_back({res.c.key.text(), res.c.predicted, res.answered, {}});
    }
    e.deviations[it->second].in.push_back(cell_of(res.c));
  }
  return e;
}

std::string disagreement_table(const Report& report) {
  std::vector<std::array<std::string, 6>> rows{{"type", "transition", "mask", "value", "predicted", "answered"}};
  for (const auto& res : report.results) {
    if (res.agreed()) continue;
    const auto& c = res.c;
    std::string value = c.key.kind == spec::ProbeCaseKey::Kind::Value ? c.key.attr + " = " + std::to_string(c.key.value)
                                                                       : "";
    rows.push_back({spec::RuleTable::builtin().types()[static_cast<size_t>(c.type)].name,
                    std::string(spec::state_name(c.cur)) + "->" + spec::state_name(c.next),
                    spec::RuleTable::builtin().mask_names(c.mask, "|"), value, c.predicted, res.answered});
  }
  if (rows.size() == 1) return "";
  std::array<size_t, 6> width{};
  for (const auto& r : rows)
    for (size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
  std::ostringstream o;
  for (const auto& r : rows) {
    std::string line;
    for (size_t i = 0; i < r.size(); ++i) {
      line += r[i];
      if (i + 1 < r.size()) line += std::string(width[i] - r[i].size() + 2, ' ');
    }
    o << line << "\n";
  }
  return o.str();
}

std::vector<std::string> compare_deviations(const spec::ProviderEntry& recorded, const spec::ProviderEntry& found) {
  auto before = by_cell(recorded), now = by_cell(found);
  std::vector<std::string> out;
  for (const auto& [key, answer] : before) {
    auto it = now.find(key);
    if (it == now.end())
      out.push_back(key.second + " " + key.first + ": recorded " + answer.second + ", the device now answers " +
                    answer.first + " as predicted");
    else if (it->second != answer)
      out.push_back(key.second + " " + key.first + ": recorded " + answer.second + " (predicted " + answer.first +
                    "), the device now answers " + it->second.second + " (predicted " + it->second.first + ")");
  }
  for (const auto& [key, answer] : now)
    if (!before.count(key))
      out.push_back(key.second + " " + key.first + ": not recorded, the device now answers " + answer.second +
                    " where qpo predicts " + answer.first);
  return out;
}

}  // namespace qpo::probe
