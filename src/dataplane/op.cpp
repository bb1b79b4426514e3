#include "dataplane/op.h"

#include <cctype>
#include <string>

namespace qpo::dataplane {

namespace {

constexpr OpInfo kOps[] = {
    {Op::Send, "send", "send", IBV_WR_SEND, false, false, true},
    {Op::SendImm, "send_imm", "send_with_imm", IBV_WR_SEND_WITH_IMM, false, false, true},
    {Op::Write, "write", "rdma_write", IBV_WR_RDMA_WRITE, true, false, false},
    {Op::WriteImm, "write_imm", "rdma_write_with_imm", IBV_WR_RDMA_WRITE_WITH_IMM, true, false, true},
    {Op::Read, "read", "rdma_read", IBV_WR_RDMA_READ, true, false, false},
    {Op::CmpSwap, "cas", "atomic_cmp_swp", IBV_WR_ATOMIC_CMP_AND_SWP, true, true, false},
    {Op::FetchAdd, "faa", "atomic_fetch_add", IBV_WR_ATOMIC_FETCH_AND_ADD, true, true, false},
    {Op::Recv, "recv", "recv", IBV_WR_SEND, false, false, false},
};

// Verbs spellings, for users who think in IBV_WR_* names.
constexpr std::pair<const char*, Op> kVerbsNames[] = {
    {"IBV_WR_SEND", Op::Send},
    {"IBV_WR_SEND_WITH_IMM", Op::SendImm},
    {"IBV_WR_RDMA_WRITE", Op::Write},
    {"IBV_WR_RDMA_WRITE_WITH_IMM", Op::WriteImm},
    {"IBV_WR_RDMA_READ", Op::Read},
    {"IBV_WR_ATOMIC_CMP_AND_SWP", Op::CmpSwap},
    {"IBV_WR_ATOMIC_FETCH_AND_ADD", Op::FetchAdd},
    {"atomic_cmp_and_swp", Op::CmpSwap},
    {"atomic_fetch_and_add", Op::FetchAdd},
};

bool same_ci(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

}  // namespace

const OpInfo& op_info(Op op) { return kOps[static_cast<size_t>(op)]; }

std::optional<Op> parse_op(std::string_view name) {
  for (const auto& o : kOps)
    if (same_ci(name, o.name) || same_ci(name, o.scenario)) return o.op;
  for (const auto& [n, op] : kVerbsNames)
    if (same_ci(name, n)) return op;
  return std::nullopt;
}

const char* op_names() { return "send send_imm write write_imm read cas faa recv"; }

}  // namespace qpo::dataplane
