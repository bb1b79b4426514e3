#include "util/wc_status_names.h"

// Only the enum's values are used: util links nothing from libibverbs.
#include <infiniband/verbs.h>

#include "util/strings.h"

namespace qpo::util {

namespace {

struct Named {
  int value;
  const char* name;
};

constexpr Named kStatus[] = {
    {IBV_WC_SUCCESS, "IBV_WC_SUCCESS"},
    {IBV_WC_LOC_LEN_ERR, "IBV_WC_LOC_LEN_ERR"},
    {IBV_WC_LOC_QP_OP_ERR, "IBV_WC_LOC_QP_OP_ERR"},
    {IBV_WC_LOC_EEC_OP_ERR, "IBV_WC_LOC_EEC_OP_ERR"},
    {IBV_WC_LOC_PROT_ERR, "IBV_WC_LOC_PROT_ERR"},
    {IBV_WC_WR_FLUSH_ERR, "IBV_WC_WR_FLUSH_ERR"},
    {IBV_WC_MW_BIND_ERR, "IBV_WC_MW_BIND_ERR"},
    {IBV_WC_BAD_RESP_ERR, "IBV_WC_BAD_RESP_ERR"},
    {IBV_WC_LOC_ACCESS_ERR, "IBV_WC_LOC_ACCESS_ERR"},
    {IBV_WC_REM_INV_REQ_ERR, "IBV_WC_REM_INV_REQ_ERR"},
    {IBV_WC_REM_ACCESS_ERR, "IBV_WC_REM_ACCESS_ERR"},
    {IBV_WC_REM_OP_ERR, "IBV_WC_REM_OP_ERR"},
    {IBV_WC_RETRY_EXC_ERR, "IBV_WC_RETRY_EXC_ERR"},
    {IBV_WC_RNR_RETRY_EXC_ERR, "IBV_WC_RNR_RETRY_EXC_ERR"},
    {IBV_WC_LOC_RDD_VIOL_ERR, "IBV_WC_LOC_RDD_VIOL_ERR"},
    {IBV_WC_REM_INV_RD_REQ_ERR, "IBV_WC_REM_INV_RD_REQ_ERR"},
    {IBV_WC_REM_ABORT_ERR, "IBV_WC_REM_ABORT_ERR"},
    {IBV_WC_INV_EECN_ERR, "IBV_WC_INV_EECN_ERR"},
    {IBV_WC_INV_EEC_STATE_ERR, "IBV_WC_INV_EEC_STATE_ERR"},
    {IBV_WC_FATAL_ERR, "IBV_WC_FATAL_ERR"},
    {IBV_WC_RESP_TIMEOUT_ERR, "IBV_WC_RESP_TIMEOUT_ERR"},
    {IBV_WC_GENERAL_ERR, "IBV_WC_GENERAL_ERR"},
};

constexpr std::string_view kStatusPrefix = "IBV_WC_";

}  // namespace

const char* wc_status_name(int status) {
  for (const auto& e : kStatus)
    if (e.value == status) return e.name;
  return "IBV_WC_UNKNOWN";
}

std::optional<int> parse_wc_status(std::string_view name) {
  std::string upper = to_upper(name);
  for (const auto& e : kStatus) {
    std::string_view full = e.name;
    if (upper == full || upper == full.substr(kStatusPrefix.size())) return e.value;
  }
  return std::nullopt;
}

std::vector<std::string> wc_status_names() {
  std::vector<std::string> out;
  for (const auto& e : kStatus) out.emplace_back(e.name);
  return out;
}

}  // namespace qpo::util
