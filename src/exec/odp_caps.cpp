#include "exec/odp_caps.h"

#include <cstdint>

namespace qpo::exec {

std::string odp_problem(const ibv_odp_caps& caps, const std::set<spec::QpType>& qp_types) {
  if (!(caps.general_caps & IBV_ODP_SUPPORT)) return "odp_caps.general_caps lacks IBV_ODP_SUPPORT";
  struct PerType {
    spec::QpType type;
    const char* name;
    const char* field;
    uint32_t bits;
  };
  const PerType per_type[] = {{spec::QpType::RC, "RC", "rc_odp_caps", caps.per_transport_caps.rc_odp_caps},
                              {spec::QpType::UC, "UC", "uc_odp_caps", caps.per_transport_caps.uc_odp_caps},
                              {spec::QpType::UD, "UD", "ud_odp_caps", caps.per_transport_caps.ud_odp_caps}};
  for (const auto& t : per_type)
    if (qp_types.count(t.type) && t.bits == 0)
      return std::string("no ODP for ") + t.name + " QPs (odp_caps.per_transport_caps." + t.field + " is 0)";
  return "";
}

}  // namespace qpo::exec
