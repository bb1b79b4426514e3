#include "dataplane/names.h"

#include <infiniband/verbs.h>

namespace qpo::dataplane {

namespace {

struct Named {
  int value;
  const char* name;
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

}  // namespace

const char* wc_opcode_name(int opcode) { return lookup(kOpcode, opcode, "IBV_WC_UNKNOWN_OPCODE"); }

}  // namespace qpo::dataplane
