// Attribute masks as words: "IBV_QP_STATE | IBV_QP_PORT" and back.
#include "spec/rules.h"
#include "util/strings.h"

namespace qpo::spec {

std::string RuleTable::mask_names(Mask m, std::string_view sep) const {
  if (m == 0) return "0";
  std::vector<std::string> names;
  for (int bit = 0; bit < 32; ++bit) {
    Mask b = Mask{1} << bit;
    if (!(m & b)) continue;
    const AttrInfo* a = attr_by_bit(bit);
    names.push_back(a ? a->mask_name : util::hex(b));
  }
  return util::join(names, sep);
}

std::string RuleTable::mask_fields(Mask m, std::string_view sep) const {
  std::vector<std::string> names;
  for (const auto& a : attrs_)
    if (m & a.mask()) names.push_back(util::join(a.fields, "/"));
  return util::join(names, sep);
}

std::optional<Mask> RuleTable::parse_mask(std::string_view text, std::string* error) const {
  std::string_view s = util::trim(text);
  if (s.empty()) {
    if (error) *error = "empty attribute mask";
    return std::nullopt;
  }
  if (s[0] >= '0' && s[0] <= '9') {
    auto v = util::parse_uint(s);
    if (!v || *v > 0xFFFFFFFFULL) {
      if (error) *error = "bad attribute mask '" + std::string(s) + "'";
      return std::nullopt;
    }
    return static_cast<Mask>(*v);
  }
  Mask m = 0;
  for (auto part : util::split(s, '|')) {
    std::string name = util::to_upper(util::trim(part));
    if (name.rfind("IBV_QP_", 0) != 0) name = "IBV_QP_" + name;
    bool found = false;
    for (const auto& a : attrs_)
      if (a.mask_name == name) {
        m |= a.mask();
        found = true;
        break;
      }
    if (!found) {
      if (error) {
        std::vector<std::string> names;
        for (const auto& a : attrs_) names.push_back(a.mask_name);
        *error = "unknown attribute '" + std::string(util::trim(part)) + "'";
        auto guess = util::did_you_mean(name, names);
        if (!guess.empty()) *error += " (did you mean " + guess + "?)";
      }
      return std::nullopt;
    }
  }
  return m;
}

}  // namespace qpo::spec
