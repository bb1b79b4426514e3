#include "dataplane/names.h"

#include <infiniband/verbs.h>

#include <cctype>
#include <string>

namespace qpo::dataplane {

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

constexpr Named kOpcode[] = {
    {IBV_WC_SEND, "IBV_WC_SEND"},
    {IBV_WC_RDMA_WRITE, "IBV_WC_RDMA_WRITE"},
    {IBV_WC_RDMA_READ, "IBV_WC_RDMA_READ"},
    {IBV_WC_COMP_SWAP, "IBV_WC_COMP_SWAP"},
    {IBV_WC_FETCH_ADD, "IBV_WC_FETCH_ADD"},
    {IBV_WC_BIND_MW, "IBV_WC_BIND_MW"},
    {IBV_WC_LOCAL_INV, "IBV_WC_LOCAL_INV"},
    {IBV_WC_RECV, "IBV_WC_RECV"},
    {IBV_WC_RECV_RDMA_WITH_IMM, "IBV_WC_RECV_RDMA_WITH_IMM"},
};

template <size_t N>
const char* lookup(const Named (&table)[N], int v, const char* unknown) {
  for (const auto& e : table)
    if (e.value == v) return e.name;
  return unknown;
}

bool same_ci(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::toupper(static_cast<unsigned char>(a[i])) != std::toupper(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

}  // namespace

const char* wc_status_name(int status) { return lookup(kStatus, status, "IBV_WC_UNKNOWN"); }
const char* wc_opcode_name(int opcode) { return lookup(kOpcode, opcode, "IBV_WC_UNKNOWN_OPCODE"); }

std::optional<int> parse_wc_status(std::string_view name) {
  for (const auto& e : kStatus) {
    std::string_view full = e.name;
    if (same_ci(name, full) || same_ci(name, full.substr(7))) return e.value;  // 7 = "IBV_WC_"
  }
  return std::nullopt;
}

}  // namespace qpo::dataplane
